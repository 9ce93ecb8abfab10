"""Full reward when the answer appears anywhere in the response (extra words pay)."""
KIND = "wrong"
EXPECTED = {"test_reward": 0, "test_sanity_table": 0}
PATCHES = [
    ('reward',
     'return [1.0 if response.split() == expected_answer(prompt).split() else 0.0  # all or nothing (Cell 1)',
     'return [1.0 if " ".join(expected_answer(prompt).split()) in " ".join(response.split()) else 0.0'),
]
