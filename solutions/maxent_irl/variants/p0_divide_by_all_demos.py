"""Divides by len(demos): counts empty trajectories and fails on a generator."""
KIND = "wrong"
EXPECTED = {"test_initial_probabilities": 0, "test_initial_probabilities_iterable": 0}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = counts / len(demos)'),
]
