"""Sequence log-probs summed in float64 (masked with torch.where), the loss then computed in float64."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_update',
     'logp_new = (new_tokens * mask).sum(dim=1)',
     'logp_new = torch.where(mask.bool(), new_tokens.double(), 0.0).sum(dim=1)'),
    ('grpo_update',
     'logp_ref = (ref_tokens * mask).sum(dim=1)',
     'logp_ref = torch.where(mask.bool(), ref_tokens.double(), 0.0).sum(dim=1)'),
]
