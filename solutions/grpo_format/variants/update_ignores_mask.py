"""Sequence log-probs summed over padded positions too (the logged loss and kl are then wrong as well)."""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     'logp_new = (new_tokens * mask).sum(dim=1)',
     'logp_new = new_tokens.sum(dim=1)'),
    ('grpo_update',
     'logp_ref = (ref_tokens * mask).sum(dim=1)',
     'logp_ref = ref_tokens.sum(dim=1)'),
]
