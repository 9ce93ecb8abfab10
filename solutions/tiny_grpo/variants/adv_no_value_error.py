"""Never checks group_size: G < 2 or a ragged count does not raise ValueError."""
KIND = "wrong"
EXPECTED = {"test_advantages_edges": 0}
PATCHES = [
    ('advantages',
     """    if group_size < 2 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards cannot form groups of {group_size} (need group_size >= 2 dividing N)")
""",
     ''),
]
