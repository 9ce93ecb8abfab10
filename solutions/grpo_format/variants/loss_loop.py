"""One completion at a time in a Python loop, the terms stacked and averaged at the end."""
KIND = "allowed"
EXPECTED = {}


# answer cell: grpo_loss
def grpo_sequence_loss(logp_new: torch.Tensor, logp_ref: torch.Tensor, advantages: torch.Tensor,
                       beta: float, epsilon: float) -> torch.Tensor:
    """Negative mean of the clipped surrogate minus beta * k3 KL; all inputs have shape [N]."""
    terms = []
    for new, ref, adv in zip(logp_new, logp_ref, advantages):
        rho = torch.exp(new - ref)
        surrogate = torch.minimum(rho * adv, torch.clamp(rho, 1 - epsilon, 1 + epsilon) * adv)
        d = ref - new
        terms.append(surrogate - beta * (torch.exp(d) - d - 1))
    return -torch.stack(terms).mean()
