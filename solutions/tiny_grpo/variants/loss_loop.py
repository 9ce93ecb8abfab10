"""A loop over the completions: each one's unmasked tokens picked out, summed, then the mean over completions."""
KIND = "allowed"
EXPECTED = {}


# answer cell: loss
def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """[N, T] per-token exp(d) - d - 1, d = ref_logprobs - logprobs; no gradient into ref_logprobs."""
    log_ratio = ref_logprobs.detach() - logprobs  # [N, T]
    return log_ratio.exp() - log_ratio - 1  # [N, T]


def grpo_loss(logprobs: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
              ref_logprobs: torch.Tensor | None = None, beta: float = 0.0) -> torch.Tensor:
    """Scalar: mean over completions of -A_i * (sum of its masked token logprobs) + beta * (sum of its
    masked k3); per-token means for both terms also accepted. Padding changes neither value nor gradient;
    advantages are constants; ref_logprobs=None or beta=0: no KL term."""
    total = logprobs.new_zeros(())
    for i in range(logprobs.shape[0]):
        keep = mask[i].bool()  # [T]
        term = -advantages[i].detach() * logprobs[i][keep].sum()
        if ref_logprobs is not None and beta != 0:
            term = term + beta * k3_kl(logprobs[i][keep], ref_logprobs[i][keep]).sum()
        total = total + term
    return total / logprobs.shape[0]
