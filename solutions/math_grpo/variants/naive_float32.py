"""Computes in float32 (.float() on both inputs): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return -raw_rewards_or_advantages.float() * policy_log_probs.float()  # [B, T], float32'),
]
