"""Adds the feature rows in float32 (a correct answer at float32 precision)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('feature_expectation',
     'totals += features[visited].sum(axis=0)                # (d,)',
     'totals += features[visited].astype(np.float32).sum(axis=0)'),
]
