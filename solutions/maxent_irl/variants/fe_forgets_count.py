"""Sums the features but forgets n_trajectories += 1 (now stopped by a TODO 1 error, not one blaming the data)."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}
PATCHES = [
    ('feature_expectation',
     """        n_trajectories += 1
""",
     ''),
]
