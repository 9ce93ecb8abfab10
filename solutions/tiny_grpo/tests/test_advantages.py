"""Cell 5, group_advantages (2 points): three batches of groups (4, 4 and 6 rewards per group). Judge:
the reference divides by the sample std; the population std (the other convention the text allows)
is the reference's values times sqrt(G / (G - 1)), up to the epsilon; one convention for all three."""
import math

import torch
from _rules import matches, rescaled, same_as

TODO = "Cell 5, group_advantages"
POINTS = 2
CASES = {"20 rewards in groups of 4": 4, "8 rewards in groups of 4, uneven spreads": 4, "12 rewards in groups of 6": 6}


def probe(nb, observe):
    draw = torch.Generator().manual_seed(0)
    inputs = [torch.rand(20, generator=draw) * 3,                                              # [20]
              torch.tensor([0.0, 1.0, 1.0, 1.0, 5.0, 1.0, 2.0, 3.0]),                          # [8]
              torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])]      # [12], 0/1 rewards
    for (label, group_size), rewards in zip(CASES.items(), inputs, strict=True):
        observe(label, nb.group_advantages, rewards, group_size)


def judge(check):
    population = {label: rescaled(check.expected[label], [math.sqrt(g / (g - 1))]) for label, g in CASES.items()}
    first = next(iter(CASES))
    expected = population if matches(check, first, population[first]) else check.expected
    for label in CASES:
        same_as(check, label, expected[label])


_FORMULA = ("(r - group mean) / (group std + eps) within each group of group_size consecutive rows (groups are "
            "rows 0..G-1, G..2G-1, ...), one std convention throughout; the result keeps the shape [N]")
HINTS = dict.fromkeys(CASES, _FORMULA)
