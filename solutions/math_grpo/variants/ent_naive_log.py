"""-(p * log p) with log of the softmax: 0 * log 0 = NaN for large logits."""
KIND = "wrong"
EXPECTED = {"test_compute_entropy_stable": 0}


# answer cell: compute_entropy
def compute_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) over the last dimension; output shape is logits.shape[:-1].
    Compute it from ``logsumexp`` so large logits do not overflow."""
    ### BEGIN SOLUTION
    probs = torch.softmax(logits, dim=-1)  # [..., V]
    return -(probs * probs.log()).sum(dim=-1)
    ### END SOLUTION
