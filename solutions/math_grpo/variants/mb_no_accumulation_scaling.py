"""Forgets to divide by gradient_accumulation_steps."""
KIND = "wrong"
EXPECTED = {
    "test_microbatch_train_step": 0,
    "test_microbatch_train_step_grad": 0,
    "test_microbatch_train_step_normalize": 0,
}
PATCHES = [
    ('microbatch_train_step',
     'loss = per_response.mean() / gradient_accumulation_steps',
     'loss = per_response.mean()'),
]
