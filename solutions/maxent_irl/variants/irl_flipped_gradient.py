"""Gradient with the wrong sign (model minus expert)."""
KIND = "wrong"
EXPECTED = {"test_maxent_irl_update": 0, "test_maxent_irl_steps": 0, "test_maxent_irl_world": 0}
PATCHES = [
    ('maxent_irl',
     'grad = empirical - model_features                                                # (d,)',
     'grad = model_features - empirical'),
]
