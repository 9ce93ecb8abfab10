"""Problem 7, requirement 2: the gradient backward() leaves on the log-probs, accumulated over three calls.

Stand-ins for the other TODOs as in test_microbatch_train_step (``_stand_ins``); the same calls with the
student's own functions count too (``_either``)."""
from _batch import gradient, log_probs
from _either import OWN, stand_ins_or_own
from _stand_ins import STEP
from _step import step

TODO = "Problem 7 (microbatch train step: gradients and accumulation)"
POINTS = 3
CALLS = (("call 1, reinforce_with_baseline, 2 accumulation steps", 2, "reinforce_with_baseline"),
         ("call 2, grpo_clip, 2 accumulation steps", 2, "grpo_clip"),
         ("call 3, no_baseline, 4 accumulation steps", 4, "no_baseline"))


def gradient_after(nb, leaf, steps: int, loss_type: str):
    """One more call on ``leaf``; the gradient it holds then, in the dtype of the returned loss."""
    return gradient(leaf, step(nb, leaf, steps, loss_type)[0])


def accumulate(nb, observe, suffix: str) -> None:
    """Three calls on one leaf; the gradient is recorded after each (it must add up, never reset)."""
    leaf = log_probs(70, grad=True)
    for label, steps, loss_type in CALLS:
        observe(f"gradient after {label}{suffix}", gradient_after, nb, leaf, steps, loss_type)


def probe(nb, observe):
    with nb.replaced(**STEP):
        accumulate(nb, observe, "")
    accumulate(nb, observe, OWN)


def judge(check):
    stand_ins_or_own(check)


_GRAD = ("call backward() on the scaled loss inside the function and let gradients accumulate across calls (never "
         "zero or overwrite .grad here): after each call .grad holds the sum of the calls' gradients; only response "
         "tokens get one (the check replaces compute_policy_gradient_loss, masked_mean and masked_normalize by simple "
         "stand-ins: call them)")
HINTS = {f"gradient after {label}": _GRAD for label, _, _ in CALLS}
