"""The handout's answer: normalise in place, no check for the empty case."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts /= counts.sum()'),
]
