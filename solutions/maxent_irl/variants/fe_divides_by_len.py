"""Divides by len(demos): counts empty trajectories and raises TypeError on a generator."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}
PATCHES = [
    ('feature_expectation',
     '    return totals / n_trajectories',
     '    return totals / len(demos)'),
]
