"""Calls of grpo_microbatch_train_step for the probes of Problem 7 (float64 inputs written out or drawn from seeds)."""
import torch
from _batch import ADVANTAGES, MASK, RAW_REWARDS, column, log_probs, nearby


def inputs(loss_type: str) -> dict:
    """The keyword inputs ``loss_type`` needs (only those, as the training loop passes them)."""
    if loss_type == "no_baseline":
        return {"raw_rewards": column(RAW_REWARDS)}
    if loss_type == "reinforce_with_baseline":
        return {"advantages": column(ADVANTAGES)}
    old = nearby(log_probs(70), 71, 0.6)                                             # (B, T), ratios in [0.74, 1.35]
    return {"advantages": column(ADVANTAGES), "old_log_probs": old, "cliprange": 0.2}


def step(nb, leaf, steps: int, loss_type: str, mask=None, **extra):
    """One call on ``leaf`` (the policy's log-probs); returns what the function returned."""
    mask = torch.tensor(MASK) if mask is None else mask
    return nb.grpo_microbatch_train_step(leaf, mask, steps, loss_type, **inputs(loss_type), **extra)


def returned_loss(nb, steps: int, loss_type: str, **extra):
    """The loss one call returns, on a fresh leaf."""
    return step(nb, log_probs(70, grad=True), steps, loss_type, **extra)[0]

