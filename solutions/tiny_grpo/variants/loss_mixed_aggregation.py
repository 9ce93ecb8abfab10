"""The policy term summed per completion but the KL term a per-token mean."""
KIND = "wrong"
EXPECTED = {"test_kl": 0}


# answer cell: loss
def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    log_ratio = ref_logprobs.detach() - logprobs  # [N, T]
    return torch.exp(log_ratio) - log_ratio - 1


def grpo_loss(logprobs, advantages, mask, ref_logprobs=None, beta=0.0):
    keep = mask.to(logprobs.dtype)  # [N, T]
    policy = (-advantages.detach().to(logprobs.dtype).unsqueeze(1) * logprobs * keep).sum(dim=1).mean()
    if ref_logprobs is None or beta == 0:
        return policy
    kl = ((k3_kl(logprobs, ref_logprobs) * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)).mean()
    return policy + beta * kl
