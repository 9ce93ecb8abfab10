"""Torch.where instead of torch.minimum; float mask and a Python float fraction."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_clip_loss',
     'loss = -torch.minimum(unclipped, clipped)  # [B, T]',
     'loss = -torch.where(unclipped < clipped, unclipped, clipped)'),
    ('grpo_clip_loss',
     'return loss, {"clipped": was_clipped, "clip_fraction": was_clipped.float().mean()}',
     'return loss, {"clipped": was_clipped.float(), "clip_fraction": was_clipped.float().mean().item()}'),
]
