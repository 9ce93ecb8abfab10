"""Plain Python over groups with statistics.stdev (unbiased), tensors built at the end."""
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
    import statistics

    scores = [reward_fn(r, t) for r, t in zip(rollout_responses, repeated_ground_truths)]
    rewards = [float(s["reward"]) for s in scores]
    advantages = []
    for start in range(0, len(rewards), group_size):
        group = rewards[start:start + group_size]
        mean = sum(group) / len(group)
        if normalize_by_std:
            std = statistics.stdev(group)
            advantages += [(r - mean) / (std + advantage_eps) for r in group]
        else:
            advantages += [r - mean for r in group]
    metadata = {"reward_mean": sum(rewards) / len(rewards),
                "format_reward": sum(s["format_reward"] for s in scores) / len(scores),
                "answer_reward": sum(s["answer_reward"] for s in scores) / len(scores)}
    return torch.tensor(advantages), torch.tensor(rewards), metadata
    ### END SOLUTION
