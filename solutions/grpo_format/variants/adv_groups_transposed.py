"""Groups taken across prompts (view(G, -1), statistics over dim 0) (every group-th reward instead of consecutive ones,
put back in place).
"""
KIND = "wrong"
EXPECTED = {"test_group_advantages": 0}
PATCHES = [
    ('group_advantages',
     'grouped = rewards.view(-1, group_size)',
     'grouped = rewards.view(group_size, -1).T'),
    ('group_advantages',
     'return ((grouped - mean) / std).view(-1)',
     'return ((grouped - mean) / std).T.reshape(-1)'),
]
