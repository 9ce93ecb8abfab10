"""TODO 3, forward pass and terminal states: chains, and a small random MDP whose two actions move alike.

Whatever the policy, the next state then has the same distribution, so these values depend on the
forward push and the terminal states only; the backward step is the other test cell's."""
import numpy as np

TODO = "TODO 3 (expected SVF)"
POINTS = 4


def chain(n: int) -> np.ndarray:
    """(S, S', A) dynamics of one action moving 0 -> 1 -> ... -> n-1, which loops on itself."""
    p = np.zeros((n, n, 1))
    for s in range(n):
        p[s, min(s + 1, n - 1), 0] = 1.0
    return p


def probe(nb, observe):
    svf = nb.compute_expected_svf
    gen = np.random.default_rng(5)
    weights = gen.random((4, 4, 1)) + 0.05
    p = np.repeat(weights / weights.sum(axis=1, keepdims=True), 2, axis=2)         # (S, S', A): A = 2, alike
    r = gen.uniform(-0.5, 0.5, size=4)
    observe("a 3-state chain ending in a terminal state", svf, chain(3), np.array([1.0, 0, 0]), [2], np.zeros(3))
    observe("a 5-state chain with rewards", svf, chain(5), np.eye(5)[0], [4], np.array([0.4, -0.1, 0.2, 0.0, -0.3]))
    for kind, terminal in (("list", [2]), ("tuple", (2,)), ("set", {2}), ("array", np.array([2]))):
        observe(f"terminal given as a {kind}", svf, chain(3), np.array([1.0, 0, 0]), terminal,
                np.array([0.3, -0.2, 0.1]))
    observe("a trajectory that starts in a terminal state", svf, p.copy(), np.eye(4)[1], [1], r.copy())
    observe("a random MDP, mass starting in two states", svf, p.copy(), np.array([0.4, 0, 0.6, 0]), [1], r.copy())


_TERMINAL = ("terminal states are counted when the mass arrives and then send nothing on, from step 0 on; "
             "no step creates mass")
HINTS = {
    "a 3-state chain ending in a terminal state": "d[0] is the start distribution and each step moves the mass one "
                                                  "state on; " + _TERMINAL,
    "a 5-state chain with rewards": "a deterministic chain visits every state once, whatever the reward",
    "terminal given as a set": "`terminal` may be any iterable of state indices (list, tuple, set or array)",
    "terminal given as a tuple": "`terminal` may be any iterable of state indices (list, tuple, set or array)",
    "terminal given as a array": "`terminal` may be any iterable of state indices (list, tuple, set or array)",
    "a trajectory that starts in a terminal state": _TERMINAL,
    "a random MDP, mass starting in two states": "mass leaves non-terminal states only, split over the actions "
                                                 "by pi(a|s) (the shares add up to 1) and then over next states by "
                                                 "the dynamics; " + _TERMINAL,
}
