"""The handout's loss without the optional bound on the log-ratio."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_loss',
     'log_ratio = raw + (raw.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND) - raw).detach()',
     'log_ratio = raw'),
]
