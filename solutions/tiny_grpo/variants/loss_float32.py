"""k3 and the loss computed in float32 (.float() on every input), whatever dtype the log-probs come in."""
KIND = "allowed"
EXPECTED = {}


# answer cell: loss
def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """[N, T] per-token exp(d) - d - 1, d = ref_logprobs - logprobs; no gradient into ref_logprobs."""
    log_ratio = ref_logprobs.detach().float() - logprobs.float()  # [N, T]
    return torch.exp(log_ratio) - log_ratio - 1  # [N, T]


def grpo_loss(logprobs: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
              ref_logprobs: torch.Tensor | None = None, beta: float = 0.0) -> torch.Tensor:
    """Scalar: mean over completions of -A_i * (sum of its masked token logprobs) + beta * (sum of its
    masked k3); per-token means for both terms also accepted. Padding changes neither value nor gradient;
    advantages are constants; ref_logprobs=None or beta=0: no KL term."""
    logprobs = logprobs.float()  # [N, T]
    per_token = -advantages.detach().float().unsqueeze(1) * logprobs  # [N, T]
    if ref_logprobs is not None and beta != 0:
        per_token = per_token + beta * k3_kl(logprobs, ref_logprobs.float())  # [N, T]
    per_token = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))  # [N, T]
    return per_token.sum(dim=1).mean()
