"""Groups cut with split(): a length that is not a multiple of group_size gives a short last group instead of an error.
"""
KIND = "wrong"
EXPECTED = {"test_group_advantages_input": 0}


# answer cell: group_advantages
def compute_group_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Rewards normalised within each consecutive group of `group_size`; same shape as `rewards`."""
    if group_size < 1:
        raise ValueError(f"group_size must be at least 1, got {group_size}")
    parts = []
    for group in rewards.split(group_size):                                  # [<= G] each
        std = group.std(unbiased=False).clamp_min(1e-6)
        parts.append((group - group.mean()) / std)
    return torch.cat(parts)                                                  # [B*G]
