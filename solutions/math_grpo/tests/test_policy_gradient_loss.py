"""Problem 5, requirement 1: each loss_type computes its own loss from its own inputs (every input passed).

The naive loss and GRPO-Clip are replaced by stand-ins (``_stand_ins``) so a mistake in Problems 3
and 4 costs nothing here; the same calls with the student's own loss functions count too (``_either``).
"""
from _batch import ADVANTAGES, RAW_REWARDS, column, log_probs, nearby
from _either import OWN, stand_ins_or_own
from _stand_ins import LOSSES

TODO = "Problem 5 (policy-gradient loss dispatcher)"
POINTS = 4
TYPES = ("no_baseline", "reinforce_with_baseline", "grpo_clip")


def dispatched_loss(dispatch, loss_type):
    new = log_probs(60)
    result = dispatch(new, loss_type, raw_rewards=column(RAW_REWARDS), advantages=column(ADVANTAGES),
                      old_log_probs=nearby(new, 61, 0.6), cliprange=0.2)
    return result[0]


def probe(nb, observe):
    with nb.replaced(**LOSSES):
        for loss_type in TYPES:
            observe(loss_type, dispatched_loss, nb.compute_policy_gradient_loss, loss_type)
    for loss_type in TYPES:
        observe(loss_type + OWN, dispatched_loss, nb.compute_policy_gradient_loss, loss_type)


def judge(check):
    stand_ins_or_own(check)


_STAND_INS = (" (the check replaces compute_naive_policy_gradient_loss and compute_grpo_clip_loss by simple stand-ins: "
              "call them, with these arguments)")
HINTS = {"no_baseline": "no_baseline is the naive loss with raw_rewards (not the advantages)" + _STAND_INS,
         "reinforce_with_baseline": "reinforce_with_baseline is the naive loss with the advantages" + _STAND_INS,
         "grpo_clip": "grpo_clip is compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)"
                      + _STAND_INS}
