"""Problem 4, requirement 1: the per-token GRPO-Clip loss, for a policy far from and near the old one."""
from _batch import ADVANTAGES, clip_cases, column

TODO = "Problem 4 (GRPO-Clip loss)"
POINTS = 4


def loss_only(clip, advantages, new, old, cliprange):
    return clip(advantages, new, old, cliprange)[0]


def probe(nb, observe):
    for label, (new, old, cliprange) in clip_cases().items():
        observe(label, loss_only, nb.compute_grpo_clip_loss, column(ADVANTAGES), new, old, cliprange)


_LOSS = ("-min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A) per token, ratio = exp(policy_log_probs - "
         "old_log_probs) (new over old), A broadcast over its row, shape (batch, seq); the min is the pessimistic "
         "bound, and the ratio is clipped, not the advantage")
HINTS = {label: _LOSS for label in ("far from the old policy, cliprange 0.2", "near the old policy, cliprange 0.1",
                                    "near the old policy, cliprange 0.3")}
