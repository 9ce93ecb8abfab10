"""Adds visit counts per state (right only for one-hot features, as in the visible check)."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}
PATCHES = [
    ('feature_expectation',
     'totals += features[visited].sum(axis=0)                # (d,)',
     'totals += np.bincount(visited, minlength=features.shape[1])'),
]
