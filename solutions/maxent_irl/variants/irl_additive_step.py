"""Plain gradient ascent omega + lr_t * grad instead of the exponentiated step."""
KIND = "wrong"
EXPECTED = {"test_maxent_irl_update": 0, "test_maxent_irl_steps": 0, "test_maxent_irl_world": 0}
PATCHES = [
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = omega + lr / (1.0 + step) * grad'),
]
