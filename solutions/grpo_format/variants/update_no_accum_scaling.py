"""Each micro-batch's loss is not divided by grad_accum."""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     '(loss / cfg.grad_accum).backward()',
     'loss.backward()'),
]
