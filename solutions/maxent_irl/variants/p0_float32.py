"""Returns the start distribution as a float32 array (a correct answer at float32 precision)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('initial_probabilities',
     'counts = counts / counts.sum()                  # (S,)',
     'counts = (counts / counts.sum()).astype(np.float32)'),
]
