"""Divides by the number of non-empty demos counted in a second pass: right for a list, NaN for a generator."""
KIND = "wrong"
EXPECTED = {"test_initial_probabilities_iterable": 0}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = counts / len([t for t in demos if t.transitions()])'),
]
