"""Clamps the count at 1, so an empty slice gives 0 instead of NaN."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('masked_mean',
     'return (tensor * weights).sum(dim=dim) / weights.sum(dim=dim)',
     'return (tensor * weights).sum(dim=dim) / weights.sum(dim=dim).clamp(min=1)'),
]
