"""Clears the gradient before backward(), so microbatches do not accumulate."""
KIND = "wrong"
EXPECTED = {"test_microbatch_train_step_grad": 0}
PATCHES = [
    ('microbatch_train_step',
     """    loss.backward()
""",
     """    policy_log_probs.grad = None
    loss.backward()
"""),
]
