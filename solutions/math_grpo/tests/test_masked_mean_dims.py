"""Problem 6, requirement 3: masked_mean along any dim of 2-d and 3-d tensors, negative dims included
(NaN or 0 accepted for a slice with no masked entry)."""
import torch
from _batch import CUBE, CUBE_MASK, VALUES, column
from _empty_slices import nan_or_zero_for_empty_slices

TODO = "Problem 6 (masked_mean for any dim and rank)"
POINTS = 2
MASK = [[0, 0, 1, 1, 1], [1, 0, 0, 0, 0], [1, 0, 0, 1, 1]]                           # (3, 5), column 1 empty


def probe(nb, observe):
    mean = nb.masked_mean
    observe("2-d, dim=-1", mean, column(VALUES), torch.tensor(MASK), dim=-1)
    observe("2-d, dim=-2", mean, column(VALUES), torch.tensor(MASK), dim=-2)
    for dim in (1, -1, 0, -2, 2):
        observe(f"3-d, dim={dim}", mean, column(CUBE), torch.tensor(CUBE_MASK), dim=dim)


def judge(check):
    nan_or_zero_for_empty_slices(check)


_DIMS = ("reduce exactly the given dimension of a tensor of any rank (a negative dim counts from the end: -1 is the "
         "last dimension of a 3-d tensor too), with the shape of tensor.mean(dim)")
HINTS = {label: _DIMS for label in ("2-d, dim=-1", "2-d, dim=-2", "3-d, dim=1", "3-d, dim=-1", "3-d, dim=0",
                                    "3-d, dim=-2", "3-d, dim=2")}
