"""Divides by the largest count (right only when every demo starts in one state, as in the visible check)."""
KIND = "wrong"
EXPECTED = {"test_initial_probabilities": 0, "test_initial_probabilities_iterable": 0}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = counts / counts.max()'),
]
