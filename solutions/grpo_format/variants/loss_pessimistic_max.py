"""Written as the max of the negated terms, KL mean added."""
KIND = "allowed"
EXPECTED = {}


# answer cell: grpo_loss
def grpo_sequence_loss(logp_new: torch.Tensor, logp_ref: torch.Tensor, advantages: torch.Tensor,
                       beta: float, epsilon: float) -> torch.Tensor:
    """Negative mean of the clipped surrogate minus beta * k3 KL; all inputs have shape [N]."""
    ratio = (logp_new - logp_ref).exp()
    pessimistic = torch.max(-ratio * advantages, -ratio.clamp(1 - epsilon, 1 + epsilon) * advantages)
    d = logp_ref - logp_new
    return pessimistic.mean() + beta * (d.exp() - d - 1).mean()
