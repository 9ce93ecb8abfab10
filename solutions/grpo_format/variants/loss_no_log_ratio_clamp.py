"""The handout's loss without the optional clamp of the log-ratio."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_loss',
     '.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)',
     ''),
]
