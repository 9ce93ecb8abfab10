"""A uniform distribution of the right shape, ignoring the demonstrations."""
KIND = "wrong"
EXPECTED = {"test_initial_probabilities": 0, "test_initial_probabilities_iterable": 0}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = np.full(n_states, 1.0 / n_states)'),
]
