"""Divides by the group std but never subtracts the group mean (the demo's buggy sample)."""
KIND = "wrong"
EXPECTED = {"test_advantages": 0, "test_advantages_edges": 0}
PATCHES = [
    ('advantages',
     'centered = grouped - grouped.mean(dim=1, keepdim=True)  # [B, G]',
     'centered = grouped'),
]
