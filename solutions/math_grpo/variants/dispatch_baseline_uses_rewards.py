"""Reinforce_with_baseline uses the raw rewards instead of the advantages."""
KIND = "wrong"
EXPECTED = {"test_policy_gradient_loss": 0}
PATCHES = [
    ('policy_gradient_loss',
     'return compute_naive_policy_gradient_loss(advantages, policy_log_probs), {}',
     ('return compute_naive_policy_gradient_loss(raw_rewards if raw_rewards is not None else advantages, pol'
      'icy_log_probs), {}')),
]
