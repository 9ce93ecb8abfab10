"""-(softmax * log_softmax).sum(-1)."""
KIND = "allowed"
EXPECTED = {}


# answer cell: compute_entropy
def compute_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) over the last dimension; output shape is logits.shape[:-1].
    Compute it from ``logsumexp`` so large logits do not overflow."""
    ### BEGIN SOLUTION
    return -(torch.softmax(logits, dim=-1) * torch.log_softmax(logits, dim=-1)).sum(dim=-1)
    ### END SOLUTION
