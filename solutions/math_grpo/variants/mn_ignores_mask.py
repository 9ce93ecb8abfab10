"""Sums every entry, masked or not."""
KIND = "wrong"
EXPECTED = {"test_masked_normalize": 0}
PATCHES = [
    ('masked_normalize',
     'return (tensor * weights).sum(dim=dim) / constant_normalizer',
     'return tensor.sum(dim=dim) / constant_normalizer'),
    ('masked_normalize',
     'return (tensor * weights).sum() / constant_normalizer',
     'return tensor.sum() / constant_normalizer'),
]
