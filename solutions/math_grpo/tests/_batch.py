"""Inputs of the loss probes: log-probabilities drawn from seeds, per-response numbers and masks written out.

Everything is float64 on the CPU, so a float64 answer is judged at float64 precision; an answer that
computes in float32 returns float32 and is judged at float32 precision (the comparator follows the
dtype the student returned).
"""
import torch

ADVANTAGES = [[1.5], [-0.5], [0.0], [2.0]]                                        # (B, 1), a zero one among them
RAW_REWARDS = [[1.0], [0.0], [0.5], [1.0]]                                        # (B, 1)
MASK = [[1, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 1], [1, 1, 1, 1, 1, 1], [1, 0, 0, 1, 0, 1]]  # (B, T): 1 to 6 tokens


def column(values) -> torch.Tensor:
    """A float64 tensor of written-out values (per-response numbers are (B, 1))."""
    return torch.tensor(values, dtype=torch.float64)


def log_probs(seed: int, rows: int = 4, cols: int = 6, grad: bool = False) -> torch.Tensor:
    """(rows, cols) float64 log-probabilities in [-3, -0.05], the same on every machine."""
    gen = torch.Generator().manual_seed(seed)
    values = -0.05 - 2.95 * torch.rand(rows, cols, generator=gen, dtype=torch.float64)   # (rows, cols)
    return values.requires_grad_(grad)


def nearby(old: torch.Tensor, seed: int, spread: float) -> torch.Tensor:
    """New log-probabilities within +-spread / 2 of ``old`` (ratios near 1, some inside the clip range)."""
    gen = torch.Generator().manual_seed(seed)
    return old + spread * (torch.rand(old.shape, generator=gen, dtype=torch.float64) - 0.5)  # (B, T)


def gradient(leaf: torch.Tensor, returned) -> torch.Tensor:
    """The gradient ``backward()`` left on ``leaf``, in the dtype of the tensor the function returned.

    Autograd casts a gradient back to the leaf's float64 even when the function computed in float32
    (``.float()`` inside); reporting it in the returned dtype judges it at the precision it was
    computed in."""
    if leaf.grad is None:
        raise RuntimeError("no gradient reached the log-probs (were they detached, or backward() not called?)")
    dtype = returned.dtype if isinstance(returned, torch.Tensor) and returned.is_floating_point() else leaf.dtype
    return leaf.grad.detach().to(dtype)


def clip_cases() -> dict:
    """label -> (new log-probs, old log-probs, cliprange): a policy far from the old one, and one near it
    with a narrow and a wide clip range (ratios inside and outside the range, both signs of A)."""
    old = log_probs(40)                                                              # (B, T)
    near = nearby(old, 42, 0.6)                                                      # ratios in [0.74, 1.35]
    return {"far from the old policy, cliprange 0.2": (log_probs(41), old, 0.2),
            "near the old policy, cliprange 0.1": (near, old, 0.1),
            "near the old policy, cliprange 0.3": (near.clone(), old, 0.3)}


def problem_11_example(reduce, **kwargs) -> tuple:
    """Problem 11's two responses of 4 and 7 tokens, ratio 1 and advantage 2 everywhere (float32, as the
    notebook writes it): (per-response values, gradient of their mean with respect to the ratio)."""
    ratio = torch.ones(2, 7, requires_grad=True)                                     # (2, 7)
    advs = torch.full((2, 7), 2.0)                                                   # (2, 7)
    masks = torch.tensor([[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]])             # (2, 7)
    per_response = reduce(ratio * advs, masks, dim=1, **kwargs)                      # (2,)
    per_response.mean().backward()
    return per_response, gradient(ratio, per_response)


VALUES = [[-0.7047, -1.3966, 0.6037, -1.7103, 0.1435], [-0.5372, -1.768, 0.0297, -1.85, -0.2654],
          [-1.7206, -1.6371, -0.3019, 1.3074, -1.5048]]                              # (3, 5)
CUBE = [[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[-2.0, 1.0, 0.0], [3.0, -1.5, 0.5]]]   # (2, 2, 3)
CUBE_MASK = [[[1, 0, 1], [1, 1, 0]], [[0, 1, 1], [1, 0, 0]]]                         # (2, 2, 3)
