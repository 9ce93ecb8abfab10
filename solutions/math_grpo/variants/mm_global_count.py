"""Divides each slice's sum by the total number of masked entries."""
KIND = "wrong"
EXPECTED = {"test_masked_mean": 0, "test_masked_mean_dims": 0}
PATCHES = [
    ('masked_mean',
     'return (tensor * weights).sum(dim=dim) / weights.sum(dim=dim)',
     'return (tensor * weights).sum(dim=dim) / weights.sum()'),
]
