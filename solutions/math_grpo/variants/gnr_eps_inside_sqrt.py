"""Adds advantage_eps under the square root instead of to the std."""
KIND = "wrong"
EXPECTED = {"test_group_normalized_rewards": 0}
PATCHES = [
    ('group_normalized_rewards',
     'centred = centred / (spread + advantage_eps)  # [n_groups, G]',
     'centred = centred / (grouped.var(dim=1, keepdim=True) + advantage_eps).sqrt()'),
]
