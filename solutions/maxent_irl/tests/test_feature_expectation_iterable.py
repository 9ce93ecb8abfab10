"""TODO 1, any iterable: the demonstrations handed over as a generator."""
import numpy as np
from _demos import demo

from helpers.irl import Trajectory

TODO = "TODO 1 (feature expectations)"


def probe(nb, observe):
    gen = np.random.default_rng(77)
    feat = gen.uniform(-1.0, 1.0, size=(6, 4))                                      # (S, d)
    paths = [gen.integers(0, 6, size=int(gen.integers(2, 8))).tolist() for _ in range(5)]
    demos = (d for d in [Trajectory([]), *[demo(p) for p in paths]])
    observe("demonstrations given as a generator", nb.feature_expectation_from_trajectories, feat, demos)


HINTS = {"demonstrations given as a generator": "a generator has no len() and can be read only once: use what the "
                                                "loop sees, not len(demos) or a second pass"}
