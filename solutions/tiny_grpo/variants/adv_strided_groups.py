"""Groups every G-th row (rows of different prompts) instead of consecutive rows."""
KIND = "wrong"
EXPECTED = {"test_advantages": 0, "test_advantages_edges": 0}
PATCHES = [
    ('advantages',
     'grouped = rewards.view(-1, group_size)  # [B, G]',
     'grouped = rewards.view(group_size, -1).T'),
]
