"""The whole cell rewritten to raise ValueError when there is nothing to count."""
KIND = "allowed"
EXPECTED = {}


# answer cell: initial_probabilities
def initial_probabilities_from_trajectories(n_states: int, demos: Iterable[Trajectory]) -> np.ndarray:
    """Empirical start-state distribution; raises ValueError when no demonstration has a transition."""
    counts = np.zeros(n_states, dtype=np.float64)
    for traj in demos:
        trans = traj.transitions()
        if not trans:
            continue
        counts[trans[0].s_from] += 1.0
    total = counts.sum()
    if total <= 0:
        raise ValueError("initial probabilities need at least one non-empty demonstration")
    return counts / total
