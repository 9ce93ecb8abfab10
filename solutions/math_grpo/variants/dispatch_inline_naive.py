"""Writes the naive loss out inline for the two naive loss types (correct, so the run with the student's own
functions matches)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('policy_gradient_loss',
     'return compute_naive_policy_gradient_loss(raw_rewards, policy_log_probs), {}',
     'return -raw_rewards * policy_log_probs, {}'),
    ('policy_gradient_loss',
     'return compute_naive_policy_gradient_loss(advantages, policy_log_probs), {}',
     'return -advantages * policy_log_probs, {}'),
]
