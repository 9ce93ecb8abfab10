"""Constant step size lr instead of lr / (1 + t)."""
KIND = "wrong"
EXPECTED = {"test_maxent_irl_steps": 0, "test_maxent_irl_world": 0}
PATCHES = [
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = omega * np.exp(lr * grad)'),
]
