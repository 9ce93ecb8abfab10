"""Gathers raw logits, never normalized."""
KIND = "wrong"
EXPECTED = {"test_get_response_log_probs": 0}
PATCHES = [
    ('get_response_log_probs',
     'log_probs = torch.log_softmax(logits, dim=-1)  # [B, T, V]',
     'log_probs = logits'),
]
