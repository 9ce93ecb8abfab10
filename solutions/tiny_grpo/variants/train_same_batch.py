"""Trains on the first batch_prompts prompts at every step."""
KIND = "wrong"
EXPECTED = {"test_training": 0}
PATCHES = [
    ('train',
     'rng.sample(prompts, cfg.batch_prompts)',
     'prompts[: cfg.batch_prompts]'),
]
