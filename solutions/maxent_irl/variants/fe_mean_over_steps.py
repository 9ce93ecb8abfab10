"""Averages a demo's feature rows over its steps instead of summing them."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}
PATCHES = [
    ('feature_expectation',
     'totals += features[visited].sum(axis=0)                # (d,)',
     'totals += features[visited].mean(axis=0)'),
]
