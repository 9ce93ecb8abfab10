"""Returns zeros of the right shape without reading the demonstrations."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}


# answer cell: feature_expectation
def feature_expectation_from_trajectories(features, demos):
    return np.zeros(np.asarray(features).shape[1])
