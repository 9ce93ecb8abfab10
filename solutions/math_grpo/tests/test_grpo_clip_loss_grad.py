"""Problem 4, requirement 2: the gradient reaches policy_log_probs only: -A * ratio where unclipped, 0 where clipped."""
import torch
from _batch import ADVANTAGES, clip_cases, column, gradient

TODO = "Problem 4 (GRPO-Clip gradient)"
POINTS = 2


def summed_gradient(clip, advantages, new, old, cliprange):
    """Gradient of the summed loss with respect to ``new``, in the dtype of the loss."""
    leaf = new.detach().clone().requires_grad_()
    loss = clip(advantages, leaf, old, cliprange)[0]
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        loss.sum().backward()
    return gradient(leaf, loss)


def probe(nb, observe):
    for label, (new, old, cliprange) in clip_cases().items():
        observe(f"gradient, {label}", summed_gradient, nb.compute_grpo_clip_loss, column(ADVANTAGES), new, old,
                cliprange)


_GRAD = ("d loss / d policy_log_probs is -A * ratio where the unclipped term is the min and exactly 0 where the "
         "clipped term is; old_log_probs is a constant, and policy_log_probs must not be detached")
HINTS = {f"gradient, {label}": _GRAD for label in ("far from the old policy, cliprange 0.2",
                                                  "near the old policy, cliprange 0.1",
                                                  "near the old policy, cliprange 0.3")}
