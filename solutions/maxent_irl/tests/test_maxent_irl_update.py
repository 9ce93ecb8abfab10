"""TODO 4, the first update from omega = 1: the gradient's direction and the multiplicative step."""
from _stand_ins import small_problem, stand_ins

TODO = "TODO 4 (maxent_irl)"
POINTS = 2


def probe(nb, observe):
    p, features, target = small_problem(3)
    with nb.replaced(**stand_ins(features, target)):
        observe("one update (max_iter=1, lr=0.7)", nb.maxent_irl, p, features.copy(), [3], [], lr=0.7, eps=0.0,
                max_iter=1)


HINTS = {"one update (max_iter=1, lr=0.7)":
         "the update is omega times exp(lr * gradient), with the gradient = expert minus model feature expectations "
         "and the full step size lr for the first update (t = 0); a result from exp(-lr * gradient) has the sign "
         "flipped, one from 1 + lr * gradient adds the step instead of multiplying"}
