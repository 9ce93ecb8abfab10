"""TODO 1, values: one-hot and dense features, empty demonstrations among them."""
import numpy as np
from _demos import demo

from helpers.irl import Trajectory

TODO = "TODO 1 (feature expectations)"
POINTS = 3


def probe(nb, observe):
    gen = np.random.default_rng(2024)
    feat = gen.uniform(-1.0, 1.0, size=(7, 3))                                      # (S, d), dense
    paths = [gen.integers(0, 7, size=int(gen.integers(2, 10))).tolist() for _ in range(6)]
    fe = nb.feature_expectation_from_trajectories
    observe("the visible check's two demonstrations", fe, np.eye(3), [demo([0, 1, 2]), demo([0, 0, 1])])
    observe("dense features", fe, feat.copy(), [demo(p) for p in paths])
    observe("dense features, empty demonstrations among them", fe, feat.copy(),
            [Trajectory([]), *[demo(p) for p in paths], Trajectory([]), Trajectory([])])


HINTS = {
    "dense features": "add the feature rows phi(s) of the visited states (every visit counts), then divide by the "
                      "number of demonstrations",
    "dense features, empty demonstrations among them": "empty trajectories are skipped and do not count in N",
}
