"""TODO 2, any iterable: the demonstrations handed over as a generator give what the same list gives."""
import numpy as np
from _demos import demo

TODO = "TODO 2 (start distribution)"
AS_LIST = "the demonstrations as a list"
AS_GENERATOR = "the same demonstrations as a generator"


def probe(nb, observe):
    gen = np.random.default_rng(32)
    walks = [gen.integers(0, 5, size=int(gen.integers(2, 6))).tolist() for _ in range(7)]
    walks[3] = []
    demos = [demo(w) for w in walks]
    observe(AS_LIST, nb.initial_probabilities_from_trajectories, 5, list(demos))
    observe(AS_GENERATOR, nb.initial_probabilities_from_trajectories, 5, (d for d in demos))


def judge(check):
    # a wrong value is the values check's point; this one is about generators only
    if check.matches(AS_LIST):
        check.same(AS_GENERATOR)
    else:
        check.expect(False, "the values are already wrong for a list (the values check says where); generators "
                            "are checked once a list gives the right result")


HINTS = {AS_GENERATOR: "a generator has no len() and can be read only once: use only what the given loop counted"}
