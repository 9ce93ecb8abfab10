"""Std + 1e-6 instead of the clamp, and a float64 result."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('group_advantages',
     'std = grouped.std(dim=1, keepdim=True, unbiased=False).clamp_min(1e-6)',
     'std = grouped.std(dim=1, keepdim=True, unbiased=False) + 1e-6'),
    ('group_advantages',
     'return ((grouped - mean) / std).view(-1)',
     'return ((grouped - mean) / std).view(-1).double()'),
]
