"""Counts a token as clipped when its ratio leaves [1 - eps, 1 + eps] (the other convention the docstring allows)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_clip_loss',
     'was_clipped = clipped < unclipped  # [B, T] the min picked the clipped side',
     'was_clipped = (ratio < 1.0 - cliprange) | (ratio > 1.0 + cliprange)'),
]
