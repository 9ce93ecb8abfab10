"""Visit counts per state times the feature matrix (general features)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('feature_expectation',
     'totals += features[visited].sum(axis=0)                # (d,)',
     'totals += np.bincount(visited, minlength=features.shape[0]) @ features'),
]
