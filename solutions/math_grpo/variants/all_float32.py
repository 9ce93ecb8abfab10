"""Every tensor function computes in float32 (the losses, masked_mean, masked_normalize, the microbatch step, the
entropy): each is judged at float32 precision and keeps full points, the microbatch step included."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'return -raw_rewards_or_advantages.float() * policy_log_probs.float()  # [B, T], float32'),
    ('grpo_clip_loss',
     """    ratio = torch.exp(policy_log_probs - old_log_probs)  # [B, T]
""",
     """    advantages = advantages.float()  # [B, 1]
    ratio = torch.exp(policy_log_probs.float() - old_log_probs.float())  # [B, T], float32
"""),
    ('masked_mean', 'weights = mask.to(tensor.dtype)', 'tensor, weights = tensor.float(), mask.float()'),
    ('masked_normalize', 'weights = mask.to(tensor.dtype)', 'tensor, weights = tensor.float(), mask.float()'),
    ('microbatch_train_step',
     """    )  # [B, T]
""",
     """    )  # [B, T]
    per_token, response_mask = per_token.float(), response_mask.float()  # float32 from here on
"""),
    ('compute_entropy',
     """    log_norm = torch.logsumexp(logits, dim=-1)  # [...]
""",
     """    logits = logits.float()  # [..., V]
    log_norm = torch.logsumexp(logits, dim=-1)  # [...]
"""),
]
