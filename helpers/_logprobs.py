"""Log-probabilities of chosen tokens without a [N, T, V] float32 copy of the logits.

``log_softmax(logits)[..., token]`` equals ``logits[..., token] - logsumexp(logits)``: one number
per position needs one gathered logit and one row-wise logsumexp, not a whole normalised
vocabulary. At Qwen's vocabulary (V = 151,936) the full ``log_softmax`` of one micro-batch
(8 x 384 positions) is a 1.9 GB float32 tensor, and autograd keeps it (plus its gradient) for
the backward pass. Here the forward pass visits the positions in chunks, keeping only a
[N, chunk, V] float32 slice alive at a time, and the backward pass recomputes each chunk's
softmax instead of storing it. The only full-size tensor left is the gradient of the logits,
which the model's output layer needs anyway.
"""
from __future__ import annotations

import torch

DEFAULT_CHUNK = 32
"""Positions per chunk: [N, 32, V] float32 is 156 MB at N = 8, V = 151,936."""


def _check(logits: torch.Tensor, targets: torch.Tensor, temperature: float) -> None:
    if logits.dim() != 3:
        raise ValueError(f"logits must be [N, T, V]; got shape {tuple(logits.shape)}")
    if targets.shape != logits.shape[:2]:
        raise ValueError(
            f"targets must be [N, T] = {tuple(logits.shape[:2])} to match logits {tuple(logits.shape)}; "
            f"got {tuple(targets.shape)} (score logits[:, :-1] against ids[:, 1:])")
    if targets.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"targets must hold integer token ids; got {targets.dtype}")
    if not temperature > 0:
        raise ValueError("temperature must be > 0 (use 1.0 for greedy rollouts)")


class _ChosenLogProbs(torch.autograd.Function):
    """out[n, t] = z[n, t, y] - logsumexp_v z[n, t, v] with z = logits / temperature, by chunks."""

    @staticmethod
    def forward(ctx, logits, targets, temperature, chunk):
        n, t, _ = logits.shape
        out = torch.empty(n, t, dtype=torch.float32, device=logits.device)  # [N, T]
        for start in range(0, t, chunk):
            z = logits[:, start:start + chunk].float() / temperature  # [N, c, V] float32, freed next turn
            picked = z.gather(-1, targets[:, start:start + chunk, None]).squeeze(-1)  # [N, c]
            out[:, start:start + chunk] = picked - torch.logsumexp(z, dim=-1)  # [N, c]
        ctx.save_for_backward(logits, targets)
        ctx.temperature, ctx.chunk = temperature, chunk
        return out

    @staticmethod
    def backward(ctx, grad_out):
        # d out[n,t] / d z[n,t,v] = 1[v == y] - softmax(z)[v]; d z / d logits = 1 / temperature
        logits, targets = ctx.saved_tensors
        grad_logits = torch.empty_like(logits)  # [N, T, V] in the logits' dtype
        for start in range(0, logits.shape[1], ctx.chunk):
            part = slice(start, start + ctx.chunk)
            z = logits[:, part].float() / ctx.temperature  # [N, c, V]
            g = grad_out[:, part, None].float()  # [N, c, 1]
            grad = torch.softmax(z, dim=-1).mul_(-g)  # [N, c, V]
            grad.scatter_add_(-1, targets[:, part, None], g)
            grad_logits[:, part] = grad.div_(ctx.temperature)
        return grad_logits, None, None, None


def chosen_token_logprobs(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0, chunk: int = DEFAULT_CHUNK
) -> torch.Tensor:
    """[N, T] float32 ``log_softmax(logits / temperature)`` at ``targets``, chunked over T.

    ``logits`` is [N, T, V] in any float dtype (left as it is: no float32 copy of the whole
    tensor is made), ``targets`` [N, T] token ids. Same values as the full ``log_softmax``
    followed by ``gather`` (float32 rounding aside), gradients too.
    """
    _check(logits, targets, temperature)
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of positions; got {chunk}")
    return _ChosenLogProbs.apply(logits, targets.long(), float(temperature), int(chunk))
