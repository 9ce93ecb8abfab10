"""Counts the demonstrations in a second pass over demos: right for a list, empty for a generator."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation_iterable": 0}
PATCHES = [
    ('feature_expectation',
     """        n_trajectories += 1
""",
     ''),
    ('feature_expectation',
     '    if n_trajectories == 0:',
     """    n_trajectories = sum(1 for t in demos if t.state_sequence().size)
    if n_trajectories == 0:"""),
]
