"""Problem 2, requirement 2: advantages with normalize_by_std=True, groups of 3, 4 and 6, two eps, equal rewards."""
from _rewards import REWARDS, TIES, advantages

TODO = "Problem 2 (group-normalized advantages)"
POINTS = 3
CASES = {"groups of 4, eps 1e-6": (REWARDS, 4, 1e-6), "groups of 3, eps 0.01": (REWARDS, 3, 0.01),
         "groups of 6, eps 1e-6": (REWARDS, 6, 1e-6), "groups whose rewards are all equal": (TIES, 4, 1e-6)}


def probe(nb, observe):
    for label, (rewards, size, eps) in CASES.items():
        observe(label, advantages, nb, rewards, size, eps, True)


_FORMULA = ("(r - group mean) / (group std + advantage_eps) over consecutive groups of group_size, with the "
            "unbiased std (divide by G - 1, torch's default), shape (rollout_batch_size,)")
HINTS = {"groups of 4, eps 1e-6": _FORMULA, "groups of 6, eps 1e-6": _FORMULA,
         "groups of 3, eps 0.01": "advantage_eps is added to the std, outside the square root; " + _FORMULA,
         "groups whose rewards are all equal": "a group with equal rewards has std 0, so its advantages are exactly 0"}
