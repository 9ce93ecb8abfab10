"""Averages over every position (masked entries zeroed), not only the masked ones."""
KIND = "wrong"
EXPECTED = {"test_masked_mean": 0, "test_masked_mean_dims": 0}
PATCHES = [
    ('masked_mean',
     'return (tensor * weights).sum(dim=dim) / weights.sum(dim=dim)',
     'return (tensor * weights).mean(dim=dim)'),
]
