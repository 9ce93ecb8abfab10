"""Softmax of the counts instead of their shares."""
KIND = "wrong"
EXPECTED = {"test_initial_probabilities": 0, "test_initial_probabilities_iterable": 0}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = np.exp(counts) / np.exp(counts).sum()'),
]
