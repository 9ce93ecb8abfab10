"""Clips the advantages instead of the ratio."""
KIND = "wrong"
EXPECTED = {"test_grpo_clip_loss": 0, "test_grpo_clip_loss_grad": 0, "test_grpo_clip_loss_metadata": 0}
PATCHES = [
    ('grpo_clip_loss',
     'clipped = torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange) * advantages  # [B, T]',
     'clipped = ratio * torch.clamp(advantages, 1.0 - cliprange, 1.0 + cliprange)'),
]
