"""TODO 2, input checks: bad sizes raise an error, and the rewards passed in are left as they were."""
import torch

TODO = "TODO 2 (group advantages, input checks)"
POINTS = 2
BAD_INPUTS = (("5 rewards in groups of 2", (torch.ones(5), 2)), ("6 rewards in groups of 4", (torch.ones(6), 4)),
              ("group_size 0", (torch.ones(4), 0)), ("a negative group_size", (torch.ones(4), -2)))


def call_and_forget(fn, *args):
    """Calls fn; what it returns is the other test cell's business, only an error counts here."""
    fn(*args)


def probe(nb, observe):
    ga = nb.compute_group_advantages
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 2.0, 2.0])
    observe("a valid call (6 rewards in groups of 2)", call_and_forget, ga, rewards, 2)
    observe.value("the rewards after that call", rewards.detach().clone())
    for label, args in BAD_INPUTS:
        observe(label, call_and_forget, ga, *args)


_RAISE = "raise a ValueError that says what is wrong when group_size < 1 or len(rewards) is not a multiple of it"
HINTS = {"the rewards after that call": "do not modify `rewards` (no in-place operations such as sub_ on it or on a "
                                        "view of it)",
         **{label: _RAISE for label, _ in BAD_INPUTS}}
