"""Scores input_ids (the current token) instead of labels (the next one)."""
KIND = "wrong"
EXPECTED = {"test_get_response_log_probs": 0}
PATCHES = [
    ('get_response_log_probs',
     'log_probs.gather(-1, labels.unsqueeze(-1))',
     'log_probs.gather(-1, input_ids.unsqueeze(-1))'),
]
