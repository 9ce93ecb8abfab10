"""TODO 4, step sizes lr / (1 + t) over several updates, and stopping once a change is below eps."""
from _stand_ins import small_problem, stand_ins

TODO = "TODO 4 (maxent_irl)"
POINTS = 2


def probe(nb, observe):
    p, features, target = small_problem(4)
    with nb.replaced(**stand_ins(features, target)):
        for updates in (2, 3, 6):
            observe(f"{updates} updates (lr=0.7)", nb.maxent_irl, p, features.copy(), [3], [], lr=0.7, eps=0.0,
                    max_iter=updates)
        observe("a fit that stops at eps=1e-3", nb.maxent_irl, p, features.copy(), [3], [], lr=0.7, eps=1e-3,
                max_iter=1000)


_DECAY = "update t (t = 0, 1, ...) uses the step size lr / (1 + t): lr, lr / 2, lr / 3, ..."
HINTS = {"2 updates (lr=0.7)": _DECAY, "3 updates (lr=0.7)": _DECAY, "6 updates (lr=0.7)": _DECAY,
         "a fit that stops at eps=1e-3": "keep the given loop: it stops as soon as the largest weight change is "
                                         "below eps"}
