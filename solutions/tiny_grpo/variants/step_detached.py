"""Computes the log-probs under no_grad: nothing to back-propagate."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'logprobs = scored(part)  # [n, t]',
     'logprobs = scored(part).detach().requires_grad_(True)'),
]
