"""In-place multiplication omega *= exp(...)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega *= np.exp(lr / (1.0 + step) * grad)'),
]
