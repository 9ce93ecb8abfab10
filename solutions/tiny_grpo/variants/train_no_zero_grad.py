"""Never zeroes the gradients: each step adds to the previous ones."""
KIND = "wrong"
EXPECTED = {"test_training": 0, "test_training_log": 0}
PATCHES = [
    ('train',
     """        optimizer.zero_grad(set_to_none=True)
""",
     ''),
]
