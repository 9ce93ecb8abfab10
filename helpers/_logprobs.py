"""Log-probabilities of chosen tokens straight from the last hidden states, never a [N, T, V] logits tensor.

``log_softmax(z)[..., token]`` equals ``z[..., token] - logsumexp(z)`` with ``z = head(hidden) /
temperature``: one number per position needs one gathered logit and one row-wise logsumexp. At Qwen's
vocabulary (V = 151,936) the logits of one micro-batch (8 x 384 positions) alone are 0.9 GB in bfloat16
and their float32 ``log_softmax`` 1.9 GB, kept by autograd for the backward pass. Here the forward pass
applies the output layer to a chunk of positions at a time, keeping only a [N, chunk, V] float32 slice
alive, and the backward pass recomputes each chunk's softmax instead of storing it; the only gradient it
returns is the hidden states' (the output layer is frozen under LoRA).

It takes hidden states and the output layer, not logits: the notebooks' TODOs compute log-probs from
logits, and the kit's own machinery must never be one of their answers.
"""
from __future__ import annotations

import torch

DEFAULT_CHUNK = 32
"""Positions per chunk: [N, 32, V] float32 is 156 MB at N = 8, V = 151,936."""


def _check(hidden: torch.Tensor, head: torch.nn.Module, targets: torch.Tensor, temperature: float) -> None:
    if hidden.dim() != 3:
        raise ValueError(f"hidden states must be [N, T, H]; got shape {tuple(hidden.shape)}")
    if not isinstance(getattr(head, "weight", None), torch.Tensor) or head.weight.shape[-1] != hidden.shape[-1]:
        raise ValueError(f"the output layer must map H = {hidden.shape[-1]} to the vocabulary")
    if targets.shape != hidden.shape[:2]:
        raise ValueError(
            f"targets must be [N, T] = {tuple(hidden.shape[:2])} to match hidden states {tuple(hidden.shape)}; "
            f"got {tuple(targets.shape)}")
    if targets.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"targets must hold integer token ids; got {targets.dtype}")
    if not temperature > 0:
        raise ValueError("temperature must be > 0 (use 1.0 for greedy rollouts)")


def _scaled_logits(hidden: torch.Tensor, weight: torch.Tensor, bias, temperature: float) -> torch.Tensor:
    """[N, c, V] float32 logits / temperature of a chunk of positions (the output layer in its own dtype)."""
    return torch.nn.functional.linear(hidden.to(weight.dtype), weight, bias).float() / temperature


class _ChosenLogProbs(torch.autograd.Function):
    """out[n, t] = z[n, t, y] - logsumexp_v z[n, t, v] with z = head(hidden) / temperature, by chunks."""

    @staticmethod
    def forward(ctx, hidden, weight, bias, targets, temperature, chunk):
        n, t, _ = hidden.shape
        out = torch.empty(n, t, dtype=torch.float32, device=hidden.device)  # [N, T]
        for start in range(0, t, chunk):
            z = _scaled_logits(hidden[:, start:start + chunk], weight, bias, temperature)  # [N, c, V], freed next turn
            picked = z.gather(-1, targets[:, start:start + chunk, None]).squeeze(-1)  # [N, c]
            out[:, start:start + chunk] = picked - torch.logsumexp(z, dim=-1)  # [N, c]
        ctx.save_for_backward(hidden, weight, bias, targets)
        ctx.temperature, ctx.chunk = temperature, chunk
        return out

    @staticmethod
    def backward(ctx, grad_out):
        # d out[n,t] / d z[n,t,v] = 1[v == y] - softmax(z)[v]; z = (hidden W^T + b) / temperature
        hidden, weight, bias, targets = ctx.saved_tensors
        grad_hidden = torch.empty_like(hidden)  # [N, T, H] in the hidden states' dtype
        for start in range(0, hidden.shape[1], ctx.chunk):
            part = slice(start, start + ctx.chunk)
            z = _scaled_logits(hidden[:, part], weight, bias, ctx.temperature)  # [N, c, V]
            g = grad_out[:, part, None].float()  # [N, c, 1]
            grad_z = torch.softmax(z, dim=-1).mul_(-g)  # [N, c, V]
            grad_z.scatter_add_(-1, targets[:, part, None], g)
            grad_z = grad_z.div_(ctx.temperature).to(weight.dtype)  # [N, c, V]
            grad_hidden[:, part] = (grad_z @ weight).to(hidden.dtype)  # [N, c, H]
        return grad_hidden, None, None, None, None, None


def head_token_logprobs(hidden: torch.Tensor, head: torch.nn.Module, targets: torch.Tensor, temperature: float = 1.0,
                        chunk: int = DEFAULT_CHUNK) -> torch.Tensor:
    """[N, T] float32 log-probability of ``targets`` under ``head(hidden) / temperature``, chunked over T.

    ``hidden`` is [N, T, H] (the last hidden states at the positions that predict ``targets``), ``head`` the
    model's output layer (``model.get_output_embeddings()``, frozen), ``targets`` [N, T] token ids. Same values
    as the full ``log_softmax`` of the logits followed by ``gather`` (float32 rounding aside), gradients to
    ``hidden`` too.
    """
    _check(hidden, head, targets, temperature)
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of positions; got {chunk}")
    bias = getattr(head, "bias", None)
    return _ChosenLogProbs.apply(hidden, head.weight, bias, targets.long(), float(temperature), int(chunk))
