"""Centred by the mean of the whole batch, not of each group."""
KIND = "wrong"
EXPECTED = {"test_group_advantages": 0}
PATCHES = [
    ('group_advantages',
     'mean = grouped.mean(dim=1, keepdim=True)',
     'mean = grouped.mean()'),
]
