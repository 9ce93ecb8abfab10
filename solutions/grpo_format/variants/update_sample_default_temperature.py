"""Samples at the default temperature 1 instead of cfg.temperature."""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     'temperature=cfg.temperature, do_sample=True)',
     'do_sample=True)'),
]
