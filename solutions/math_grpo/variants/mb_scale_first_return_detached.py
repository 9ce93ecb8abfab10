"""Scales each response before the batch mean; returns the loss detached."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('microbatch_train_step',
     'loss = per_response.mean() / gradient_accumulation_steps',
     'loss = (per_response / gradient_accumulation_steps).mean()'),
    ('microbatch_train_step',
     'return loss, dict(metadata)',
     'return loss.detach(), dict(metadata)'),
]
