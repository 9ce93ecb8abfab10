"""TODO 2, values: random groups of several sizes, Question 2's group, groups of equal rewards, groups of one."""
import numpy as np
import torch

TODO = "TODO 2 (group advantages)"
POINTS = 3
SHAPES = (("3 prompts, groups of 2", 2, 3), ("4 prompts, groups of 3", 3, 4), ("2 prompts, groups of 5", 5, 2),
          ("1 prompt, a group of 8", 8, 1))


def probe(nb, observe):
    ga = nb.compute_group_advantages
    gen = np.random.default_rng(7)
    for label, group_size, groups in SHAPES:
        rewards = gen.choice([0.0, 1.0, 0.5, -1.0, 2.0], size=group_size * groups)                # (B * G,)
        observe(label, ga, torch.tensor(rewards, dtype=torch.float32), group_size)
    observe("Question 2's group (2, 1, -1)", ga, torch.tensor([2.0, 1.0, -1.0]), 3)
    observe("groups of equal rewards", ga, torch.tensor([0.0, 0.0, 1.0, 1.0, 0.5, 0.5]), 2)
    observe("groups of one completion", ga, torch.tensor([0.3, 1.0, 0.0]), 1)
    observe("nearly equal rewards", ga, torch.tensor([1000.0, 1000.0 + 1e-7]), 2)
    observe("two groups of 2 with one nonzero reward", ga, torch.tensor([1.0, 0.0, 0.0, 0.0]), 2)


_FORMULA = ("(r - mean of its group) / max(std of its group, 1e-6), groups of group_size consecutive rewards, "
            "population std (unbiased=False)")
HINTS = {
    **{label: _FORMULA for label, _, _ in SHAPES},
    "Question 2's group (2, 1, -1)": "use the population standard deviation (unbiased=False, divide by G)",
    "groups of equal rewards": "a group whose rewards are all equal has std 0: its advantages are 0, not NaN",
    "groups of one completion": "a group of one completion has advantage 0",
    "nearly equal rewards": "rewards that are equal in float32 make a group of equal rewards: advantages 0",
    "two groups of 2 with one nonzero reward": "one advantage per reward, in the rewards' shape and order",
}
