"""Grpo_clip returns an empty metadata dict."""
KIND = "wrong"
EXPECTED = {"test_policy_gradient_loss_metadata": 0}
PATCHES = [
    ('policy_gradient_loss',
     'return compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)',
     'return compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)[0], {}'),
]
