"""Returns features @ ones, the right shape (omega never moves)."""
KIND = "wrong"
EXPECTED = {"test_maxent_irl_update": 0, "test_maxent_irl_steps": 0, "test_maxent_irl_world": 0}
PATCHES = [
    ('maxent_irl',
     'grad = empirical - model_features                                                # (d,)',
     'grad = 0.0 * empirical'),
    ('maxent_irl',
     'omega = omega * np.exp(lr / (1.0 + step) * grad)                                 # (d,), stays > 0',
     'omega = omega * 1.0'),
]
