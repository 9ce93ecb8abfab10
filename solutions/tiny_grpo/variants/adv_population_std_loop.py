"""A Python loop with the population std (the other convention)."""
KIND = "allowed"
EXPECTED = {}


# answer cell: advantages
def group_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """[N] rewards -> [N] advantages (r - group mean) / (group std + eps), either std convention; a tied
    group gives zeros, not NaN. ValueError if group_size < 2 or N is not a multiple of it."""
    values = [float(r) for r in rewards]
    if group_size < 2 or len(values) % group_size:
        raise ValueError("group_size must be >= 2 and divide the number of rewards")
    out = []
    for start in range(0, len(values), group_size):
        group = values[start: start + group_size]
        mean = sum(group) / group_size
        std = (sum((r - mean) ** 2 for r in group) / group_size) ** 0.5  # population std
        out += [(r - mean) / (std + eps) for r in group]
    return torch.tensor(out)
