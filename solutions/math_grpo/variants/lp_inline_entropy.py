"""Computes the token entropy inline from the log-softmax instead of calling compute_entropy."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('get_response_log_probs',
     'result["token_entropy"] = compute_entropy(logits)  # [B, T]',
     'result["token_entropy"] = -(log_probs.exp() * log_probs).sum(dim=-1)  # [B, T]'),
]
