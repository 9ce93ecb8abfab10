"""Keeps omega in float32 (a correct update at float32 precision)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = (omega * np.exp(lr / (1.0 + step) * grad)).astype(np.float32)'),
]
