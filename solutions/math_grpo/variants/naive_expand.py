"""Expands the advantages explicitly."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return -(raw_rewards_or_advantages.expand_as(policy_log_probs) * policy_log_probs)'),
]
