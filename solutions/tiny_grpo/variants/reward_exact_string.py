"""Compares raw strings, so the model's leading space costs the reward."""
KIND = "wrong"
EXPECTED = {"test_reward": 0, "test_sanity_table": 0}
PATCHES = [
    ('reward',
     'return [1.0 if response.split() == expected_answer(prompt).split() else 0.0  # all or nothing (Cell 1)',
     'return [1.0 if response == expected_answer(prompt) else 0.0'),
]
