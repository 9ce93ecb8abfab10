"""Calls the naive loss and GRPO-Clip itself instead of going through compute_policy_gradient_loss."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('microbatch_train_step',
     """    per_token, metadata = compute_policy_gradient_loss(
        policy_log_probs, loss_type, raw_rewards, advantages, old_log_probs, cliprange
    )  # [B, T]
""",
     """    if loss_type == "grpo_clip":
        per_token, metadata = compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)  # [B, T]
    else:
        weights = raw_rewards if loss_type == "no_baseline" else advantages  # [B, 1]
        per_token, metadata = compute_naive_policy_gradient_loss(weights, policy_log_probs), {}  # [B, T]
"""),
]
