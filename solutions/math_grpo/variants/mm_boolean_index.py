"""Boolean indexing for dim=None, torch.where for a dim."""
KIND = "allowed"
EXPECTED = {}


# answer cell: masked_mean
def masked_mean(tensor: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Mean of the entries of ``tensor`` where ``mask`` is 1 (or True).

    ``dim=None`` averages over every masked entry (a 0-d tensor); otherwise the result has
    the shape of ``tensor.mean(dim)`` (``dim`` may be negative). A slice with no masked entry
    may give NaN (0 / 0, which flags an empty response) or 0; the training loop never makes one.
    """
    ### BEGIN SOLUTION
    keep = mask.bool()
    if dim is None:
        return tensor[keep].mean()
    return torch.where(keep, tensor, torch.zeros_like(tensor)).sum(dim) / keep.sum(dim)
    ### END SOLUTION
