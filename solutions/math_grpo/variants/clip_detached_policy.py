"""Computes the ratio from detached log-probs: right values, no gradient."""
KIND = "wrong"
EXPECTED = {"test_grpo_clip_loss_grad": 0}
PATCHES = [
    ('grpo_clip_loss',
     'ratio = torch.exp(policy_log_probs - old_log_probs)  # [B, T]',
     'ratio = torch.exp(policy_log_probs.detach() - old_log_probs)'),
]
