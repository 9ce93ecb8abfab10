"""Entropy in bits instead of nats."""
KIND = "wrong"
EXPECTED = {"test_compute_entropy": 0, "test_compute_entropy_stable": 0}


# answer cell: compute_entropy
def compute_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) over the last dimension; output shape is logits.shape[:-1].
    Compute it from ``logsumexp`` so large logits do not overflow."""
    ### BEGIN SOLUTION
    log_probs = torch.log_softmax(logits, dim=-1)
    return -(log_probs.exp() * log_probs).sum(dim=-1) / torch.log(torch.tensor(2.0))
    ### END SOLUTION
