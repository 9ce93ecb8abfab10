"""Log-probs, mask and advantages cast to float32 explicitly before the sums and the loss."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_update',
     'logp_new = (new_tokens * mask).sum(dim=1)',
     'logp_new = (new_tokens.float() * mask.float()).sum(dim=1)'),
    ('grpo_update',
     'logp_ref = (ref_tokens * mask).sum(dim=1)',
     'logp_ref = (ref_tokens.float() * mask.float()).sum(dim=1)'),
    ('grpo_update',
     'advantages[rows], beta=cfg.beta',
     'advantages[rows].float(), beta=cfg.beta'),
]
