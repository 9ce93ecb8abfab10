"""Ignores the temperature: the log-probs of another distribution than the sampler's."""
KIND = "wrong"
EXPECTED = {"test_logprobs": 0}
PATCHES = [
    ('logprobs',
     'scores = logits[:, prompt_width - 1:-1].float() / temperature',
     'scores = logits[:, prompt_width - 1:-1].float()'),
]
