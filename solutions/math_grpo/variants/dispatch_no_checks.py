"""No argument checks: missing inputs fail deep inside (TypeError) or not at all."""
KIND = "wrong"
EXPECTED = {"test_policy_gradient_loss_checks": 0}


# answer cell: policy_gradient_loss
def compute_policy_gradient_loss(
    policy_log_probs: torch.Tensor,
    loss_type: Literal["no_baseline", "reinforce_with_baseline", "grpo_clip"],
    raw_rewards: torch.Tensor | None = None,
    advantages: torch.Tensor | None = None,
    old_log_probs: torch.Tensor | None = None,
    cliprange: float | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Dispatch to the right per-token loss.

    * ``no_baseline``: naive loss with ``raw_rewards`` (required);
    * ``reinforce_with_baseline``: naive loss with ``advantages`` (required);
    * ``grpo_clip``: GRPO-Clip with ``advantages``, ``old_log_probs`` and ``cliprange``
      (all required).

    An unknown ``loss_type`` or a missing required argument must fail loudly: raise
    ``ValueError`` (or fail an ``assert``, as in the handout's assertion pattern).
    Returns the per-token loss (batch_size, sequence_length) and the metadata of the underlying
    routine (``{}`` for the naive losses, GRPO-Clip's dict for ``grpo_clip``).
    """
    ### BEGIN SOLUTION
    if loss_type == "no_baseline":
        return compute_naive_policy_gradient_loss(raw_rewards, policy_log_probs), {}
    if loss_type == "reinforce_with_baseline":
        return compute_naive_policy_gradient_loss(advantages, policy_log_probs), {}
    return compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)
    ### END SOLUTION
