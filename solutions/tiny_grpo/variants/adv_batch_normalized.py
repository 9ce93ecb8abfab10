"""Normalises over the whole batch instead of within each group."""
KIND = "wrong"
EXPECTED = {"test_advantages": 0, "test_advantages_edges": 0}
PATCHES = [
    ('advantages',
     'grouped = rewards.view(-1, group_size)  # [B, G]',
     'grouped = rewards.view(1, -1)'),
]
