"""Float32 throughout, the population std written out as the root of the mean squared deviation."""
KIND = "allowed"
EXPECTED = {}


# answer cell: group_advantages
def compute_group_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Rewards normalised within each consecutive group of `group_size`; same shape as `rewards`."""
    if group_size < 1 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    grouped = rewards.to(torch.float32).reshape(-1, group_size)                    # [B, G]
    centred = grouped - grouped.mean(dim=1, keepdim=True)                           # [B, G]
    std = (centred ** 2).mean(dim=1, keepdim=True).sqrt()                           # [B, 1]
    return (centred / std.clamp_min(1e-6)).reshape(-1)                             # [B*G]
