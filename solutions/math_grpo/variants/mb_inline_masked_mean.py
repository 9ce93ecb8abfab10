"""Writes the masked mean out inline instead of calling masked_mean (correct, so the run with the student's own
functions matches)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('microbatch_train_step',
     'per_response = masked_mean(per_token, response_mask, dim=1)  # [B]',
     'per_response = (per_token * response_mask).sum(dim=1) / response_mask.sum(dim=1)  # [B]'),
]
