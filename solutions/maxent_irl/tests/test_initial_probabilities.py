"""TODO 2, values: several start states, empty demonstrations among them."""
import numpy as np
from _demos import demo

TODO = "TODO 2 (start distribution)"
POINTS = 3


def probe(nb, observe):
    gen = np.random.default_rng(31)
    walks = [gen.integers(0, 6, size=int(gen.integers(2, 6))).tolist() for _ in range(9)]
    walks[2], walks[6] = [], []
    p0 = nb.initial_probabilities_from_trajectories
    observe("the visible check's two demonstrations", p0, 3, [demo([0, 1, 2]), demo([0, 0, 1])])
    observe("several start states, empty demonstrations among them", p0, 6, [demo(w) for w in walks])


HINTS = {"several start states, empty demonstrations among them":
         "entry s is the share of the non-empty demonstrations that start in s (non-negative, sums to 1)"}
