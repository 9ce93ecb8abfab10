"""Divides by the number of masked entries (a masked mean) instead of the constant."""
KIND = "wrong"
EXPECTED = {"test_masked_normalize": 0}
PATCHES = [
    ('masked_normalize',
     'return (tensor * weights).sum(dim=dim) / constant_normalizer',
     'return (tensor * weights).sum(dim=dim) / weights.sum(dim=dim)'),
]
