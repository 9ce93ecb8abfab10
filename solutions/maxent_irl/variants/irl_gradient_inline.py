"""One line: omega times exp of the step size times the gradient written inline."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('maxent_irl',
     'grad = empirical - model_features                                                # (d,)',
     '# the gradient is written inline below'),
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = omega * np.exp((lr / (step + 1)) * (empirical - model_features))'),
]
