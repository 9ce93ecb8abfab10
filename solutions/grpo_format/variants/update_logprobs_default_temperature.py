"""The policy's log-probs scored at the default temperature 1, not cfg.temperature (the sampling temperature); the
logged loss and kl are then wrong as well.
"""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     'part.prompt_width, cfg.temperature)             # [n, t]',
     'part.prompt_width)             # [n, t]'),
]
