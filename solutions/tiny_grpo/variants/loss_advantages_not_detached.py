"""The advantages stay on the graph: gradient flows into them."""
KIND = "wrong"
EXPECTED = {"test_loss": 0}
PATCHES = [
    ('loss',
     'per_token = -advantages.detach().to(logprobs.dtype).unsqueeze(1) * logprobs',
     'per_token = -advantages.to(logprobs.dtype).unsqueeze(1) * logprobs'),
]
