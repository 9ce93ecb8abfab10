"""Squeezes the (batch, 1) advantages, so they broadcast along the sequence."""
KIND = "wrong"
EXPECTED = {"test_naive_policy_gradient_loss": 0, "test_naive_policy_gradient_loss_grad": 0}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return -raw_rewards_or_advantages.squeeze(-1) * policy_log_probs'),
]
