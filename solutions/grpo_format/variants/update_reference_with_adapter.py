"""The reference is scored with the adapter on (no KL, ratio 1; the logged kl is then 0, not the KL)."""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     'ref_tokens = grpo.reference_token_logprobs(',
     'ref_tokens = grpo.token_logprobs('),
]
