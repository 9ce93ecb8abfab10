"""A Python loop over the groups, each normalised on its own (the loop version of the vectorised reference)."""
KIND = "allowed"
EXPECTED = {}


# answer cell: group_advantages
def compute_group_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Rewards normalised within each consecutive group of `group_size`; same shape as `rewards`."""
    if group_size < 1:
        raise ValueError(f"group_size must be at least 1, got {group_size}")
    if len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    out = []
    for start in range(0, len(rewards), group_size):
        group = rewards[start:start + group_size]                                   # [G]
        std = max(group.std(unbiased=False).item(), 1e-6)
        out.append((group - group.mean()) / std)
    return torch.cat(out)                                                           # [B*G]
