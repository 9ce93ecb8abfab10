"""Problem 6, masked_normalize: masked sums over a constant for dim 0, 1, -1 and None, int and bool masks, the
default constant 1.0, and Problem 11's example (two responses of 4 and 7 tokens over the constant 7)."""
import torch
from _batch import VALUES, column, problem_11_example

TODO = "Problem 6 (masked_normalize)"
POINTS = 2
MASK = [[0, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 1, 1]]                           # (3, 5), row 1 empty


def probe(nb, observe):
    norm = nb.masked_normalize
    observe("dim=1, constant 5", norm, column(VALUES), torch.tensor(MASK), dim=1, constant_normalizer=5.0)
    observe("dim=0, constant 2", norm, column(VALUES), torch.tensor(MASK), dim=0, constant_normalizer=2.0)
    observe("dim=-1, a bool mask, constant 4", norm, column(VALUES), torch.tensor(MASK).bool(), dim=-1,
            constant_normalizer=4.0)
    observe("dim=None, constant 3", norm, column(VALUES), torch.tensor(MASK), constant_normalizer=3.0)
    observe("dim=None, the default constant", norm, column(VALUES), torch.tensor(MASK))
    observe("Problem 11's example: one value per response",
            lambda: problem_11_example(norm, constant_normalizer=7)[0])
    observe("Problem 11's example: gradient of their mean",
            lambda: problem_11_example(norm, constant_normalizer=7)[1])


_SUM = ("sum the entries where the mask is 1 (over dim, or all of them for None) and divide by constant_normalizer "
        "(default 1.0), whatever the number of masked entries")
HINTS = {label: _SUM for label in ("dim=1, constant 5", "dim=0, constant 2", "dim=-1, a bool mask, constant 4",
                                   "dim=None, constant 3", "dim=None, the default constant",
                                   "Problem 11's example: one value per response",
                                   "Problem 11's example: gradient of their mean")}
