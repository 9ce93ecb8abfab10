"""Torch.where and one code path for both cases."""
KIND = "allowed"
EXPECTED = {}


# answer cell: masked_normalize
def masked_normalize(
    tensor: torch.Tensor,
    mask: torch.Tensor,
    dim: int | None = None,
    constant_normalizer: float = 1.0,
) -> torch.Tensor:
    """Sum of the masked entries of ``tensor`` (over ``dim``, or all when ``None``) divided by
    the constant ``constant_normalizer``, whatever the number of masked entries."""
    ### BEGIN SOLUTION
    kept = torch.where(mask.bool(), tensor, torch.zeros_like(tensor))
    total = kept.sum() if dim is None else kept.sum(dim)
    return total / constant_normalizer
    ### END SOLUTION
