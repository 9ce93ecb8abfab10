"""Stand-ins for the TODOs that other TODOs call, swapped in with ``nb.replaced(...)``.

Each is a simple function of the same inputs that is NOT that TODO's answer, so a check of the
dispatcher (Problem 5), the microbatch step (Problem 7) or the token entropy of the log-probs
depends on that function alone: a mistake in the naive loss, GRPO-Clip, masked_mean,
masked_normalize or compute_entropy costs only its own points.
"""
import torch


def naive_loss(raw_rewards_or_advantages, policy_log_probs):
    """Half the squared distance between each log-prob and its response's number, (B, T)."""
    return (policy_log_probs - raw_rewards_or_advantages) ** 2 / 2


def clip_loss(advantages, policy_log_probs, old_log_probs, cliprange):
    """The advantage times the log-ratio, plus cliprange, (B, T); metadata: where the log-prob rose."""
    rose = policy_log_probs.detach() > old_log_probs                                 # (B, T)
    loss = advantages * (policy_log_probs - old_log_probs) + cliprange              # (B, T)
    return loss, {"clipped": rose, "clip_fraction": rose.double().mean()}


def policy_loss(policy_log_probs, loss_type, raw_rewards=None, advantages=None, old_log_probs=None, cliprange=None):
    """The two stand-ins above, picked by loss_type (no argument checks: the probes pass every input)."""
    if loss_type == "grpo_clip":
        return clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)
    weights = raw_rewards if loss_type == "no_baseline" else advantages
    return naive_loss(weights, policy_log_probs), {}


def masked_sum_over_count_plus_one(tensor, mask, dim=None):
    """The masked sum divided by (number of masked entries + 1): close to a masked mean, but not one."""
    kept = tensor * mask
    if dim is None:
        return kept.sum() / (mask.sum() + 1)
    return kept.sum(dim) / (mask.sum(dim) + 1)


def masked_sum_over_constant_plus_one(tensor, mask, dim=None, constant_normalizer=1.0):
    """The masked sum divided by (constant_normalizer + 1)."""
    kept = tensor * mask
    return (kept.sum() if dim is None else kept.sum(dim)) / (constant_normalizer + 1)


def top_probability(logits):
    """The largest next-token probability, shape logits.shape[:-1] (not the entropy)."""
    return torch.softmax(logits, dim=-1).amax(dim=-1)


LOSSES = {"compute_naive_policy_gradient_loss": naive_loss, "compute_grpo_clip_loss": clip_loss}
"""For the dispatcher (Problem 5)."""
STEP = {**LOSSES, "compute_policy_gradient_loss": policy_loss, "masked_mean": masked_sum_over_count_plus_one,
        "masked_normalize": masked_sum_over_constant_plus_one}
"""For the microbatch step (Problem 7), whichever of the loss functions it calls."""
ENTROPY = {"compute_entropy": top_probability}
"""For get_response_log_probs."""
