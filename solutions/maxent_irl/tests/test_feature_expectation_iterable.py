"""TODO 1, any iterable: the demonstrations handed over as a generator give what the same list gives."""
import numpy as np
from _demos import demo
from _iterable import AS_GENERATOR, AS_LIST, judge  # noqa: F401 - judge: this check's rule

from helpers.irl import Trajectory

TODO = "TODO 1 (feature expectations)"
POINTS = 1


def probe(nb, observe):
    gen = np.random.default_rng(77)
    feat = gen.uniform(-1.0, 1.0, size=(6, 4))                                      # (S, d)
    paths = [gen.integers(0, 6, size=int(gen.integers(2, 8))).tolist() for _ in range(5)]
    demos = [Trajectory([]), *[demo(p) for p in paths]]
    observe(AS_LIST, nb.feature_expectation_from_trajectories, feat, list(demos))
    observe(AS_GENERATOR, nb.feature_expectation_from_trajectories, feat, (d for d in demos))


HINTS = {AS_GENERATOR: "a generator has no len() and can be read only once: use what the loop sees, not len(demos) "
                       "or a second pass"}
