"""Stand-ins for TODOs 1 to 3 while a probe runs the student's maxent_irl (TODO 4).

They are simple functions that are not the answers of TODOs 1 to 3, so TODO 4's points depend on
TODO 4 alone: a fixed expert feature expectation, a uniform start distribution, and the visits of
a one-step world, where the learner lands in state s with probability softmax(reward)_s.
"""
import numpy as np

HORIZON = 4.0


def stand_ins(features: np.ndarray, target: np.ndarray) -> dict:
    """The three stand-ins for these features; the expert visits states in proportion to ``target``."""
    expert = features.T @ (HORIZON * target / target.sum())                         # (d,)

    def feature_expectation_from_trajectories(features, demos):
        return expert.copy()

    def initial_probabilities_from_trajectories(n_states, demos):
        return np.full(n_states, 1.0 / n_states)

    def compute_expected_svf(p_transition, p_initial, terminal, reward, eps=1e-6):
        weights = np.exp(np.asarray(reward, dtype=np.float64) - np.max(reward))      # (S,)
        return HORIZON * weights / weights.sum()

    return {"feature_expectation_from_trajectories": feature_expectation_from_trajectories,
            "initial_probabilities_from_trajectories": initial_probabilities_from_trajectories,
            "compute_expected_svf": compute_expected_svf}


def small_problem(seed: int) -> tuple:
    """(p_transition, features, terminal, demos) of a 4-state, 2-action MDP with dense features."""
    gen = np.random.default_rng(seed)
    weights = gen.random((4, 4, 2)) + 0.05                                          # (S, S', A)
    features = gen.uniform(0.0, 1.0, size=(4, 3))                                   # (S, d)
    target = gen.uniform(0.1, 1.0, size=4)
    return weights / weights.sum(axis=1, keepdims=True), features, target
