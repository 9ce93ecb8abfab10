"""Computes in float32 by its own route: the sample variance from the mean of squared deviations."""
KIND = "allowed"
EXPECTED = {}


# answer cell: advantages
def group_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """[N] rewards -> [N] advantages (r - group mean) / (group std + eps), either std convention; a tied
    group gives zeros, not NaN. ValueError if group_size < 2 or N is not a multiple of it."""
    rewards = torch.as_tensor(rewards).float().reshape(-1)  # [N], float32 whatever came in
    if group_size < 2 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards cannot form groups of {group_size}")
    grouped = rewards.reshape(-1, group_size)  # [B, G]
    centered = grouped - grouped.sum(dim=1, keepdim=True) / group_size  # [B, G]
    std = ((centered ** 2).sum(dim=1, keepdim=True) / (group_size - 1)).sqrt()  # [B, 1], sample std
    return (centered / (std + eps)).reshape(-1)  # [N]
