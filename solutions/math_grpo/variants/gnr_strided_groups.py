"""Groups every n_groups-th response (view(group_size, -1)) instead of consecutive ones."""
KIND = "wrong"
EXPECTED = {"test_group_normalized_rewards": 0, "test_group_normalized_rewards_no_std": 0}
PATCHES = [
    ('group_normalized_rewards',
     'grouped = raw_rewards.view(-1, group_size)  # [n_groups, G]',
     'grouped = raw_rewards.view(group_size, -1).T'),
]
