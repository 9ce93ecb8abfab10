"""Masks by multiplication and clamps the log-ratio before exp."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('loss',
     'per_token = torch.where(keep, per_token, torch.zeros_like(per_token))  # padding: no value, no gradient',
     'per_token = per_token * keep.to(per_token.dtype)'),
    ('loss',
     'log_ratio = ref_logprobs.detach() - logprobs  # [N, T]; the reference is a constant',
     'log_ratio = (ref_logprobs.detach() - logprobs).clamp(-20.0, 20.0)'),
]
