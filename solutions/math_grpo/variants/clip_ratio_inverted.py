"""Ratio old / new instead of new / old."""
KIND = "wrong"
EXPECTED = {"test_grpo_clip_loss": 0, "test_grpo_clip_loss_grad": 0, "test_grpo_clip_loss_metadata": 0}
PATCHES = [
    ('grpo_clip_loss',
     'ratio = torch.exp(policy_log_probs - old_log_probs)  # [B, T]',
     'ratio = torch.exp(old_log_probs - policy_log_probs)'),
]
