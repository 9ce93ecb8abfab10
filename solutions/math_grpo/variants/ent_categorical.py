"""Torch.distributions.Categorical(logits=...).entropy()."""
KIND = "allowed"
EXPECTED = {}


# answer cell: compute_entropy
def compute_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) over the last dimension; output shape is logits.shape[:-1].
    Compute it from ``logsumexp`` so large logits do not overflow."""
    ### BEGIN SOLUTION
    return torch.distributions.Categorical(logits=logits).entropy()
    ### END SOLUTION
