"""Scores with the kit's own grpo.token_logprobs (no score=completion_logprobs): the step skips the student's
completion_logprobs, which the text asks it to use, so its loss is not the one its log-prob function gives."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'return fn(model, *args, score=completion_logprobs)',
     'return fn(model, *args)'),
]
