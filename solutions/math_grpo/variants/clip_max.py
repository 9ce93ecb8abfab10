"""Takes the max of the two terms instead of the min (an optimistic bound)."""
KIND = "wrong"
EXPECTED = {"test_grpo_clip_loss": 0, "test_grpo_clip_loss_grad": 0}
PATCHES = [
    ('grpo_clip_loss',
     'loss = -torch.minimum(unclipped, clipped)  # [B, T]',
     'loss = -torch.maximum(unclipped, clipped)'),
]
