"""Advantages computed per micro-batch (micro-batches hold whole groups, so nothing changes)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_update',
     'advantages[rows], beta=cfg.beta',
     'compute_group_advantages(rewards[rows], cfg.group_size), beta=cfg.beta'),
]
