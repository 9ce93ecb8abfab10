"""Log-probs computed and returned in float64."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('logprobs',
     'scores = logits[:, prompt_width - 1:-1].float() / temperature',
     'scores = logits[:, prompt_width - 1:-1].double() / temperature'),
]
