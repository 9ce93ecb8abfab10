"""Problem 7, requirement 1: the returned loss for each loss_type with masked_mean, scaled by the accumulation steps.

compute_policy_gradient_loss (and the two losses), masked_mean and masked_normalize are replaced by
stand-ins (``_stand_ins``), so this cell's points depend on the microbatch step alone; the same calls
with the student's own functions count too (``_either``).
"""
from _either import OWN, stand_ins_or_own
from _stand_ins import STEP
from _step import returned_loss

TODO = "Problem 7 (microbatch train step: loss)"
POINTS = 3
CALLS = {"reinforce_with_baseline, 2 accumulation steps": (2, "reinforce_with_baseline"),
         "grpo_clip, 2 accumulation steps": (2, "grpo_clip"),
         "no_baseline, 4 accumulation steps": (4, "no_baseline"),
         "reinforce_with_baseline, 1 accumulation step": (1, "reinforce_with_baseline")}


def probe(nb, observe):
    with nb.replaced(**STEP):
        for label, (steps, loss_type) in CALLS.items():
            observe(f"loss, {label}", returned_loss, nb, steps, loss_type)
    for label, (steps, loss_type) in CALLS.items():
        observe(f"loss, {label}{OWN}", returned_loss, nb, steps, loss_type)


def judge(check):
    stand_ins_or_own(check)


_LOSS = ("per-token loss from compute_policy_gradient_loss, masked_mean over each response's tokens (dim=1), the "
         "mean over the batch, divided by gradient_accumulation_steps (the check replaces "
         "compute_policy_gradient_loss, masked_mean and masked_normalize by simple stand-ins: call them)")
HINTS = {f"loss, {label}": _LOSS for label in CALLS}
