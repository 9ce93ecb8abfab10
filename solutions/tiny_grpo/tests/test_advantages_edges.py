"""Cell 5, group_advantages at the edges (1 point): a tied group gives zeros beside an untied one (default
comparison, or the population std's values), tied groups alone give zeros, a nearly tied group stays
finite (a rule, as its value depends on the std convention), and group_size < 2 or a count it does not
divide raises ValueError (the error's name). Zeros and errors only withhold the point: the mixed batch earns it."""
import math

import torch
from _rules import finite, flat, matches, rescaled, same_as
from _world import error_name

TODO = "Cell 5, group_advantages (edge cases)"
POINTS = 1
RAISES = ("group_size 1", "group_size 0", "3 rewards in groups of 2")
MIXED = "a tied group of 3 beside two untied ones"


def probe(nb, observe):
    adv = nb.group_advantages
    observe(MIXED, adv, torch.tensor([0.3, 0.3, 0.3, 1.0, 2.5, 0.2, 0.7, 0.7, 0.1]), 3)
    observe("two tied groups of 3", adv, torch.tensor([0.3, 0.3, 0.3, 1.0, 1.0, 1.0]), 3)
    observe("all rewards 0", adv, torch.zeros(6), 3)
    observe("a nearly tied pair (1 and 1 + 1e-7)", adv, torch.tensor([1.0, 1.0 + 1e-7]), 2)
    for label, (rewards, group_size) in zip(RAISES, ((torch.tensor([1.0, 0.0]), 1), (torch.tensor([1.0, 0.0]), 0),
                                                     (torch.tensor([1.0, 0.0, 2.0]), 2)), strict=True):
        observe(label, error_name, adv, rewards, group_size)


def judge(check):
    population = rescaled(check.expected[MIXED], [math.sqrt(3 / 2)])
    same_as(check, MIXED, population if matches(check, MIXED, population) else check.expected[MIXED])
    for label in ("two tied groups of 3", "all rewards 0", *RAISES):
        check.same(label)
    near = flat(check.got("a nearly tied pair (1 and 1 + 1e-7)"))
    check.expect(len(near) == 2 and finite(near) and all(abs(x) < 1e9 for x in near),
                 f"a nearly tied pair (1 and 1 + 1e-7): got {near[:4]}, expected two finite advantages "
                 "(epsilon keeps the division finite)")


HINTS = {MIXED: "a tied group gives zeros and the others their (r - mean) / (std + eps): each group on its own",
         "two tied groups of 3": "a tied group has std 0: (r - mean) / (0 + eps) = 0, not NaN (add eps, never "
                                 "divide by the bare std)",
         "all rewards 0": "a tied group gives zeros, not NaN",
         **dict.fromkeys(RAISES, "raise ValueError when group_size < 2 or N is not a multiple of group_size")}
