"""Torch.mul with the negated advantages."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return torch.mul(policy_log_probs, -raw_rewards_or_advantages)'),
]
