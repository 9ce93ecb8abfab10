"""Problem 2, requirement 3: advantages with normalize_by_std=False (Dr. GRPO), groups of 2, 3 and 4."""
from _rewards import REWARDS, TIES, advantages

TODO = "Problem 2 (advantages without std normalization)"
POINTS = 2
CASES = {"groups of 4": (REWARDS, 4), "groups of 3": (REWARDS, 3), "groups of 2": (REWARDS, 2),
         "groups whose rewards are all equal": (TIES, 4)}


def probe(nb, observe):
    for label, (rewards, size) in CASES.items():
        observe(label, advantages, nb, rewards, size, 1e-6, False)


_CENTRED = ("subtract only the mean of each group of group_size consecutive responses (not the batch mean), "
            "no division, shape (rollout_batch_size,)")
HINTS = {label: _CENTRED for label in CASES}
