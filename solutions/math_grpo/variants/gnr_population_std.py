"""Divides by the population std (unbiased=False), not the unbiased one the docstring pins."""
KIND = "wrong"
EXPECTED = {"test_group_normalized_rewards": 0}
PATCHES = [
    ('group_normalized_rewards',
     'spread = grouped.std(dim=1, keepdim=True)  # [n_groups, 1], unbiased',
     'spread = grouped.std(dim=1, keepdim=True, unbiased=False)'),
]
