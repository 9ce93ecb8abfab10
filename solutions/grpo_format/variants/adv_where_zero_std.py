"""No explicit checks (reshape raises), torch.where sets zero-std groups to 0."""
KIND = "allowed"
EXPECTED = {}


# answer cell: group_advantages
def compute_group_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Rewards normalised within each consecutive group of `group_size`; same shape as `rewards`."""
    grouped = rewards.reshape(-1, group_size)                               # [B, G]; bad sizes raise here
    centered = grouped - grouped.mean(dim=1, keepdim=True)                  # [B, G]
    std = grouped.std(dim=1, keepdim=True, unbiased=False)                  # [B, 1]
    safe = torch.where(std > 1e-6, std, torch.ones_like(std))               # [B, 1]
    return torch.where(std > 1e-6, centered / safe, torch.zeros_like(centered)).reshape(-1)
