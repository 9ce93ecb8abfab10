"""The loss probes' inputs: four completions of 5, 3, 1 and 4 tokens in a [4, 5] batch."""
import torch

MASK = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 0]])   # [N, T]
LENGTHS = [5, 3, 1, 4]
ADVANTAGES = torch.tensor([1.0, -1.0, 0.5, -0.5])                                             # [N]


def logprobs(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(policy, reference) token log-probs, [N, T] each: negative, the reference near the policy."""
    draw = torch.Generator().manual_seed(seed)
    policy = -torch.rand(4, 5, generator=draw) * 3                                            # [N, T]
    return policy, policy + torch.randn(4, 5, generator=draw) * 0.5                           # [N, T]


def leaf(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.clone().requires_grad_(True)


def backward(result) -> None:
    """backward() of a loss: it must be a tensor on the graph."""
    if not isinstance(result, torch.Tensor) or not result.requires_grad:
        raise TypeError(f"returned {type(result).__name__} without a gradient, expected a tensor on the graph")
    result.backward()


def got_gradient(tensor: torch.Tensor) -> bool:
    return tensor.grad is not None and bool(tensor.grad.abs().sum() > 0)
