"""Computes in float32 (.float() on every tensor input): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_clip_loss',
     """    ratio = torch.exp(policy_log_probs - old_log_probs)  # [B, T]
""",
     """    advantages = advantages.float()  # [B, 1]
    ratio = torch.exp(policy_log_probs.float() - old_log_probs.float())  # [B, T], float32
"""),
]
