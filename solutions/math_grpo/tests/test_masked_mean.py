"""Problem 6, requirement 1: masked_mean along dim 1 and dim 0 of a 2-d tensor; int, bool and float masks;
an empty row (NaN or 0 accepted there); and Problem 11's example of two responses of 4 and 7 tokens."""
import torch
from _batch import VALUES, column, problem_11_example
from _empty_slices import nan_or_zero_for_empty_slices

TODO = "Problem 6 (masked_mean along a dim)"
POINTS = 4
MASK = [[0, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 1, 1]]                           # (3, 5), row 1 empty
FULL = [[1, 0, 0, 0, 0], [1, 1, 0, 1, 0], [1, 1, 1, 1, 1]]                           # (3, 5), no empty row


def probe(nb, observe):
    mean = nb.masked_mean
    observe("dim=1, an int mask with an empty row", mean, column(VALUES), torch.tensor(MASK), dim=1)
    observe("dim=0, an int mask", mean, column(VALUES), torch.tensor(MASK), dim=0)
    observe("dim=1, a bool mask", mean, column(VALUES), torch.tensor(MASK).bool(), dim=1)
    observe("dim=1, a float mask", mean, column(VALUES), column(FULL), dim=1)
    observe("dim=1, no empty row", mean, column(VALUES), torch.tensor(FULL), dim=1)
    observe("Problem 11's example: one value per response", lambda: problem_11_example(mean)[0])
    observe("Problem 11's example: gradient of their mean", lambda: problem_11_example(mean)[1])


def judge(check):
    nan_or_zero_for_empty_slices(check)


_MEAN = ("average only the entries where the mask is 1 (or True) along dim: each slice's masked sum over its own "
         "number of masked entries, with the shape of tensor.mean(dim)")
HINTS = {"dim=1, an int mask with an empty row": _MEAN, "dim=0, an int mask": _MEAN + " (dim=0: one mean per column)",
         "dim=1, a bool mask": _MEAN, "dim=1, a float mask": _MEAN, "dim=1, no empty row": _MEAN,
         "Problem 11's example: one value per response": _MEAN + "; Problem 11's cell prints these values",
         "Problem 11's example: gradient of their mean": "keep the result differentiable: each response's masked "
                                                         "tokens share 1 / (its token count) of its weight"}
