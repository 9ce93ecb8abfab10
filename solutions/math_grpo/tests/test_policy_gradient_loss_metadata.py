"""Problem 5, requirement 2: the metadata of the underlying routine, passed on unchanged; a dict for the naive losses.

GRPO-Clip is replaced by a stand-in with metadata of its own (``_stand_ins``), so the check sees
whether the dispatcher passes on what the routine returned; the same calls with the student's own
functions count too (``_either``).
"""
from _batch import ADVANTAGES, RAW_REWARDS, column, log_probs, nearby
from _either import OWN, stand_ins_or_own
from _stand_ins import LOSSES

TODO = "Problem 5 (dispatcher metadata)"
POINTS = 2
TYPES = ("grpo_clip", "no_baseline", "reinforce_with_baseline")


def dispatched_metadata(dispatch, loss_type):
    new = log_probs(62, rows=4, cols=3)
    result = dispatch(new, loss_type, raw_rewards=column(RAW_REWARDS), advantages=column(ADVANTAGES),
                      old_log_probs=nearby(new, 63, 0.6), cliprange=0.2)
    return result[1]


def probe(nb, observe):
    with nb.replaced(**LOSSES):
        for loss_type in TYPES:
            observe(f"metadata, {loss_type}", dispatched_metadata, nb.compute_policy_gradient_loss, loss_type)
    for loss_type in TYPES:
        observe(f"metadata, {loss_type}{OWN}", dispatched_metadata, nb.compute_policy_gradient_loss, loss_type)


def judge(check):
    stand_ins_or_own(check)


_NAIVE = "the naive losses return a dict as metadata ({} is fine)"
HINTS = {"metadata, grpo_clip": "for grpo_clip, return the metadata dict compute_grpo_clip_loss returned, unchanged "
                                "(the check replaces compute_grpo_clip_loss by a stand-in with metadata of its own)",
         "metadata, no_baseline": _NAIVE, "metadata, reinforce_with_baseline": _NAIVE}
