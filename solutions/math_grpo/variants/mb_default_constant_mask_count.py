"""Uses the number of response tokens of the batch as the default constant_normalizer, not the sequence length."""
KIND = "wrong"
EXPECTED = {"test_microbatch_train_step_normalize": 0}
PATCHES = [
    ('microbatch_train_step',
     'constant = constant_normalizer if constant_normalizer is not None else response_mask.shape[1]',
     'constant = constant_normalizer if constant_normalizer is not None else response_mask.sum()'),
]
