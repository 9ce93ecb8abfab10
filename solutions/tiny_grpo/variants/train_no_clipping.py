"""Logs the gradient norm but never clips it."""
KIND = "wrong"
EXPECTED = {"test_training": 0}
PATCHES = [
    ('train',
     'grad_norm = torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm).item()  # before clipping',
     "grad_norm = torch.nn.utils.clip_grad_norm_(params, float('inf')).item()"),
]
