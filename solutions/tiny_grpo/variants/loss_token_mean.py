"""One mean over all tokens of the batch (neither a per-completion sum nor a per-completion mean)."""
KIND = "wrong"
EXPECTED = {"test_loss": 0, "test_kl": 0}
PATCHES = [
    ('loss',
     'return per_token.sum(dim=1).mean()',
     'return per_token.sum() / keep.sum()'),
]
