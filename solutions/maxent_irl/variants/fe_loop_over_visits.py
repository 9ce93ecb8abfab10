"""A Python loop over the visited states."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('feature_expectation',
     'totals += features[visited].sum(axis=0)                # (d,)',
     """for s in visited:
            totals += features[s]"""),
]
