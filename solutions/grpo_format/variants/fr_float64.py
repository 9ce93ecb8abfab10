"""The right scores in a float64 tensor: only the type-and-shape point is lost."""
KIND = "wrong"
EXPECTED = {"test_format_reward_output": 0}
PATCHES = [
    ('format_reward',
     'return torch.tensor(scores, dtype=torch.float32)',
     'return torch.tensor(scores, dtype=torch.float64)'),
]
