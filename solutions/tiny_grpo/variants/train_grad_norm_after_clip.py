"""Records the gradient norm after clipping instead of before."""
KIND = "wrong"
EXPECTED = {"test_training_log": 0}
PATCHES = [
    ('train',
     'grad_norm = torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm).item()  # before clipping',
     """torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        grad_norm = torch.nn.utils.clip_grad_norm_(params, float("inf")).item()"""),
]
