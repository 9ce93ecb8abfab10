"""Problem 6, requirement 2: masked_mean with dim=None, one mean over every masked entry (a 0-d tensor)."""
import torch
from _batch import CUBE, CUBE_MASK, VALUES, column

TODO = "Problem 6 (masked_mean over everything)"
POINTS = 2
MASK = [[0, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 1, 1]]                           # rows of 3, 0 and 3 entries


def probe(nb, observe):
    mean = nb.masked_mean
    observe("a 2-d tensor, rows with different counts", mean, column(VALUES), torch.tensor(MASK))
    observe("a 3-d tensor, a bool mask", mean, column(CUBE), torch.tensor(CUBE_MASK).bool())
    observe("a 2-d tensor, dim=None passed by name", mean, column(VALUES), column(MASK), dim=None)


_ALL = ("one mean over every masked entry of the whole tensor (a 0-d tensor): the masked sum over the total count, "
        "not the mean of the per-row means")
HINTS = {"a 2-d tensor, rows with different counts": _ALL, "a 3-d tensor, a bool mask": _ALL,
         "a 2-d tensor, dim=None passed by name": _ALL}
