"""Scores with the kit's own grpo.token_logprobs (no score=completion_logprobs): the same log-probs."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_step',
     'return fn(model, *args, score=completion_logprobs)',
     'return fn(model, *args)'),
]
