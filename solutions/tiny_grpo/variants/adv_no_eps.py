"""Divides by the bare std: a tied group gives 0/0 = NaN."""
KIND = "wrong"
EXPECTED = {"test_advantages_edges": 0}
PATCHES = [
    ('advantages',
     '(grouped.std(dim=1, keepdim=True) + eps)',
     'grouped.std(dim=1, keepdim=True)'),
]
