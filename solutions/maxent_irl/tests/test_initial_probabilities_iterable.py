"""TODO 2, any iterable: the demonstrations handed over as a generator give what the same list gives."""
import numpy as np
from _demos import demo
from _iterable import AS_GENERATOR, AS_LIST, judge  # noqa: F401 - judge: this check's rule

TODO = "TODO 2 (start distribution)"
POINTS = 1


def probe(nb, observe):
    gen = np.random.default_rng(32)
    walks = [gen.integers(0, 5, size=int(gen.integers(2, 6))).tolist() for _ in range(7)]
    walks[3] = []
    demos = [demo(w) for w in walks]
    observe(AS_LIST, nb.initial_probabilities_from_trajectories, 5, list(demos))
    observe(AS_GENERATOR, nb.initial_probabilities_from_trajectories, 5, (d for d in demos))


HINTS = {AS_GENERATOR: "a generator has no len() and can be read only once: use only what the given loop counted"}
