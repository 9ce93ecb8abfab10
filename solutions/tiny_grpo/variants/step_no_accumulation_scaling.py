"""Back-propagates each micro-batch's mean unscaled: the gradient is (number of parts) times too big."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'part.completion_mask, ref, beta) * share',
     'part.completion_mask, ref, beta)'),
]
