"""The handout's assertion pattern instead of ValueError."""
KIND = "allowed"
EXPECTED = {}


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
    assert loss_type in ("no_baseline", "reinforce_with_baseline", "grpo_clip"), loss_type
    if loss_type == "no_baseline":
        assert raw_rewards is not None, "no_baseline needs raw_rewards"
        return compute_naive_policy_gradient_loss(raw_rewards, policy_log_probs), {}
    assert advantages is not None, f"{loss_type} needs advantages"
    if loss_type == "reinforce_with_baseline":
        return compute_naive_policy_gradient_loss(advantages, policy_log_probs), {}
    assert old_log_probs is not None and cliprange is not None, "grpo_clip needs old_log_probs and cliprange"
    loss, metadata = compute_grpo_clip_loss(advantages, policy_log_probs, old_log_probs, cliprange)
    return loss, {**metadata}
    ### END SOLUTION
