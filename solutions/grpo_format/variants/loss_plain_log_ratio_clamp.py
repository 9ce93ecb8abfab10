"""A plain clamp of the log-ratio (no gradient past the bound): identical on every graded input."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_loss',
     'log_ratio = raw + (raw.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND) - raw).detach()',
     'log_ratio = raw.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)'),
]
