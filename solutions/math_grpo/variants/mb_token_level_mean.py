"""One mean over all response tokens of the batch instead of a mean per response."""
KIND = "wrong"
EXPECTED = {"test_microbatch_train_step": 0, "test_microbatch_train_step_grad": 0}
PATCHES = [
    ('microbatch_train_step',
     'loss = per_response.mean() / gradient_accumulation_steps',
     ("loss = (masked_mean(per_token, response_mask) if length_normalization == 'masked_mean' else per_respo"
      'nse.mean()) / gradient_accumulation_steps')),
]
