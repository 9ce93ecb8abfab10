"""Spells the metadata key 'clip_frac' instead of 'clip_fraction' (loses only the metadata check)."""
KIND = "wrong"
EXPECTED = {"test_grpo_clip_loss_metadata": 0}
PATCHES = [
    ('grpo_clip_loss',
     '"clip_fraction": was_clipped.float().mean()}',
     '"clip_frac": was_clipped.float().mean()}'),
]
