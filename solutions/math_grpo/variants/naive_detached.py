"""Detaches the log-probs, so no gradient reaches the policy."""
KIND = "wrong"
EXPECTED = {"test_naive_policy_gradient_loss_grad": 0}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return -raw_rewards_or_advantages * policy_log_probs.detach()'),
]
