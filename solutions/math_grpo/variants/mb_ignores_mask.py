"""Averages over every position, padded and prompt positions scored."""
KIND = "wrong"
EXPECTED = {"test_microbatch_train_step": 0, "test_microbatch_train_step_grad": 0}
PATCHES = [
    ('microbatch_train_step',
     'per_response = masked_mean(per_token, response_mask, dim=1)  # [B]',
     'per_response = per_token.mean(dim=1)'),
]
