"""Problem 7, requirement 3: length_normalization="masked_normalize", a given constant and the default one
(the sequence length): loss and gradient.

Stand-ins for the other TODOs as in test_microbatch_train_step (``_stand_ins``); the same calls with the
student's own functions count too (``_either``)."""
import torch
from _batch import MASK, gradient, log_probs
from _either import OWN, stand_ins_or_own
from _stand_ins import STEP
from _step import step

TODO = "Problem 7 (microbatch train step: masked_normalize)"
POINTS = 2
CASES = (("constant_normalizer=6, 1 accumulation step", 1, None, {"constant_normalizer": 6.0}),
         ("the default constant, a bool mask, 3 accumulation steps", 3, True, {}))


def loss_and_gradient(nb, steps: int, bool_mask, extra: dict) -> dict:
    """The returned loss and the gradient backward() left on a fresh leaf (in the loss's dtype)."""
    leaf = log_probs(70, grad=True)
    mask = torch.tensor(MASK).bool() if bool_mask else None
    loss = step(nb, leaf, steps, "reinforce_with_baseline", mask=mask, length_normalization="masked_normalize",
                **extra)[0]
    return {"loss": loss, "gradient": gradient(leaf, loss)}


def calls(nb, observe, suffix: str) -> None:
    for label, steps, bool_mask, extra in CASES:
        observe(f"{label}{suffix}", loss_and_gradient, nb, steps, bool_mask, extra)


def probe(nb, observe):
    with nb.replaced(**STEP):
        calls(nb, observe, "")
    calls(nb, observe, OWN)


def judge(check):
    stand_ins_or_own(check)


_NORM = ("with masked_normalize: each response's masked sum divided by constant_normalizer, whose default is the "
         "sequence length (response_mask.shape[1]), then the batch mean, divided by gradient_accumulation_steps, and "
         "backward() on that (the check replaces compute_policy_gradient_loss, masked_mean and masked_normalize by "
         "simple stand-ins: call them)")
HINTS = {label: _NORM for label, _, _, _ in CASES}
