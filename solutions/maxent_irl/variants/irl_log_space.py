"""The same step taken in log space: exp(log omega + lr_t * grad)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = np.exp(np.log(omega) + lr / (1.0 + step) * grad)'),
]
