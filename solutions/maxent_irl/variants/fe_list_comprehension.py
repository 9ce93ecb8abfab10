"""The whole cell rewritten: one pass collecting each non-empty demo's feature sum, then their mean."""
KIND = "allowed"
EXPECTED = {}


# answer cell: feature_expectation
def feature_expectation_from_trajectories(features, demos):
    features = np.asarray(features, dtype=np.float64)
    sums = [features[t.state_sequence()].sum(axis=0) for t in demos if len(t.state_sequence())]
    if not sums:
        raise ValueError("no non-empty demonstration")
    return np.mean(sums, axis=0)
