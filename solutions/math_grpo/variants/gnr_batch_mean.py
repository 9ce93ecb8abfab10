"""Subtracts the mean of the whole batch instead of each group's."""
KIND = "wrong"
EXPECTED = {"test_group_normalized_rewards": 0, "test_group_normalized_rewards_no_std": 0}
PATCHES = [
    ('group_normalized_rewards',
     'centred = grouped - grouped.mean(dim=1, keepdim=True)  # [n_groups, G]',
     'centred = grouped - grouped.mean()'),
]
