"""Torch.std_mean per group, float64 tensors, 0-d tensors as metadata values."""
KIND = "allowed"
EXPECTED = {}


# answer cell: group_normalized_rewards
def compute_group_normalized_rewards(
    reward_fn: Callable[[str, str], dict[str, float]],
    rollout_responses: List[str],
    repeated_ground_truths: List[str],
    group_size: int,
    advantage_eps: float,
    normalize_by_std: bool,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """Score every response and turn the scores into group-relative advantages.

    Responses come in consecutive groups of ``group_size`` (all answers to one question):
    rows ``0 .. G-1`` are the first group, ``G .. 2G-1`` the second, and so on. Call
    ``reward_fn(response, ground_truth)`` once per response, in order, and read its ``"reward"``.
    With ``normalize_by_std=True`` the advantage is ``(r - group mean) / (group std +
    advantage_eps)``, where the std is torch's default *unbiased* one (divide by G - 1, as in
    the handout's reference; the tests pin this convention); with ``False`` it is
    ``r - group mean`` (Dr. GRPO).

    Returns:
        advantages: float tensor of shape (rollout_batch_size,).
        raw_rewards: float tensor of shape (rollout_batch_size,), the ``"reward"`` values.
        metadata: a dict of plain floats to log (e.g. mean / std / max / min reward); the
            training loop below reads ``reward_mean``, ``format_reward`` and ``answer_reward``
            (the batch means of the three scores).
    """
    ### BEGIN SOLUTION
    scores = [reward_fn(r, t) for r, t in zip(rollout_responses, repeated_ground_truths)]
    raw = torch.tensor([s["reward"] for s in scores], dtype=torch.float64)
    std, mean = torch.std_mean(raw.reshape(-1, group_size), dim=-1, keepdim=True)
    centred = raw.reshape(-1, group_size) - mean
    advantages = (centred / (std + advantage_eps) if normalize_by_std else centred).flatten()
    metadata = {key: torch.tensor([float(s[key]) for s in scores]).mean() for key in ("format_reward", "answer_reward")}
    return advantages, raw, {"reward_mean": raw.mean(), **metadata}
    ### END SOLUTION
