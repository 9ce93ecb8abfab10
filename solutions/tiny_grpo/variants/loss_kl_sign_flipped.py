"""Subtracts the KL penalty: drifting from the reference is rewarded."""
KIND = "wrong"
EXPECTED = {"test_kl": 0}
PATCHES = [
    ('loss',
     'per_token = per_token + beta * k3_kl(logprobs, ref_logprobs)',
     'per_token = per_token - beta * k3_kl(logprobs, ref_logprobs)'),
]
