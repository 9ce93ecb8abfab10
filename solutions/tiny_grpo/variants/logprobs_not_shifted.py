"""Scores token j with the logits of column j (the prediction made after seeing it)."""
KIND = "wrong"
EXPECTED = {"test_logprobs": 0}
PATCHES = [
    ('logprobs',
     'scores = logits[:, prompt_width - 1:-1].float() / temperature',
     'scores = logits[:, prompt_width:].float() / temperature'),
]
