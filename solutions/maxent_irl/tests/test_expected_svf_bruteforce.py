"""TODO 3, the whole recursion: small MDPs with rewards, two or three actions, one or two terminal states."""
import math

import numpy as np

TODO = "TODO 3 (expected SVF)"
POINTS = 6


def random_mdp(gen, n: int, n_actions: int) -> np.ndarray:
    weights = gen.random((n, n, n_actions)) + 0.05                                   # (S, S', A)
    return weights / weights.sum(axis=1, keepdims=True)


def leaky_goals() -> np.ndarray:
    """Two terminal states, 1 and 2, one action to each from state 0. State 1 keeps half of its mass and
    leaks the rest to the dead end 3, so where a path ends decides the policy at state 0."""
    p = np.zeros((4, 4, 2))                                                           # (S, S', A)
    p[0, 1, 0] = p[0, 2, 1] = 1.0
    p[1, 1, :] = p[1, 3, :] = 0.5
    p[2, 2, :] = p[3, 3, :] = 1.0
    return p


def probe(nb, observe):
    svf = nb.compute_expected_svf
    gen = np.random.default_rng(11)
    cases = []
    for n_actions, p0, terminal in ((2, [0.5, 0.5, 0.0], [2]), (3, [0.6, 0.1, 0.3], [1]), (2, [0.7, 0.3, 0.0], [1, 2])):
        p = random_mdp(gen, 3, n_actions)
        r = gen.uniform(-0.3, 0.5, size=3)
        if len(terminal) > 1:
            r[terminal[0]], r[terminal[1]] = 0.4, -0.3                               # where a path ends matters
        cases.append((f"a random 3-state MDP, {n_actions} actions, terminal {terminal}", p, np.array(p0), terminal, r))
    cases.append(("two terminal states whose partition values grow alike", leaky_goals(), np.eye(4)[0], [1, 2],
                  np.array([0.25, math.log(2.0), 0.0, -0.5])))
    for label, p, p0, terminal, r in cases:
        observe(label, svf, p.copy(), p0.copy(), terminal, r.copy())
        observe(f"{label}, zero reward", svf, p.copy(), p0.copy(), terminal, np.zeros(len(r)))


_RECURSION = ("backward step: Z_(s,a) = e^{r(s)} times the sum over s' of P(s'|s,a) Z_s', with the reward of the "
              "state the step starts from, every state (terminal ones too) updated by each sweep; forward push: "
              "d_t+1(s') = sum over non-terminal s and all a of d_t(s) pi(a|s) P(s'|s,a), pi = Za / Zs")
HINTS = {label: _RECURSION for label in (
    "a random 3-state MDP, 2 actions, terminal [2]", "a random 3-state MDP, 3 actions, terminal [1]",
    "a random 3-state MDP, 2 actions, terminal [1, 2]", "two terminal states whose partition values grow alike")}
