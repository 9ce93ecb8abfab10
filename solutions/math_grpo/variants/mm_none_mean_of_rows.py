"""Dim=None averages the per-row means instead of every masked entry."""
KIND = "wrong"
EXPECTED = {"test_masked_mean_all": 0}
PATCHES = [
    ('masked_mean',
     'return (tensor * weights).sum() / weights.sum()',
     'return ((tensor * weights).sum(-1) / weights.sum(-1)).mean()'),
]
