"""The toy sorting policy of tiny_grpo's warm-up (Part 1): plumbing only.

A prompt is ``LENGTH`` digits from ``0..VOCAB-1``; the right response is those digits sorted. The
policy is not a language model: it reads the whole prompt once and picks every response position
independently, so sampling and scoring take a few lines and a training run takes seconds. The
notebook writes what the lecture is about (update weights, losses, the frozen old policy, KL);
this module holds the rest.

Shapes: B prompts, G responses per prompt, L positions, V digits.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn

VOCAB, LENGTH = 5, 3


class ToyPolicy(nn.Module):
    """prompt -> one state vector -> one distribution over digits per response position."""

    def __init__(self, dim: int = 16, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.embed = nn.Embedding(VOCAB, dim)
        with torch.no_grad():
            self.embed.weight.copy_(torch.randn(VOCAB, dim, generator=generator))
        self.enc = nn.Parameter(torch.randn(LENGTH, dim, dim, generator=generator) / math.sqrt(dim))
        self.dec = nn.Parameter(torch.randn(LENGTH, dim, dim, generator=generator) / math.sqrt(dim))

    def forward(self, prompts: torch.Tensor) -> torch.Tensor:
        """prompts [B, L] (long) -> logits [B, L, V]."""
        state = torch.einsum("bpd,pde->be", self.embed(prompts), self.enc)  # [B, dim]
        slots = torch.einsum("be,qed->bqd", state, self.dec)  # [B, L, dim]
        return slots @ self.embed.weight.T  # [B, L, V]


@torch.no_grad()
def sample(policy: ToyPolicy, prompts: torch.Tensor, G: int) -> torch.Tensor:
    """G responses per prompt, each position drawn independently: [B, G, L]."""
    probs = policy(prompts).softmax(-1)  # [B, L, V]
    draws = torch.multinomial(probs.reshape(-1, VOCAB), G, replacement=True)  # [B*L, G]
    return draws.view(len(prompts), LENGTH, G).transpose(1, 2)  # [B, G, L]


def logprobs(policy: ToyPolicy, prompts: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """log pi(response | prompt), summed over positions: [B, G] (with gradient)."""
    logp = policy(prompts).log_softmax(-1).unsqueeze(1)  # [B, 1, L, V]
    logp = logp.expand(-1, responses.shape[1], -1, -1)  # [B, G, L, V]
    return logp.gather(-1, responses.unsqueeze(-1)).squeeze(-1).sum(-1)  # [B, G]


def distance_reward(prompt: list[int], response: list[int]) -> float:
    """Positions where the response agrees with the sorted prompt."""
    return float(sum(a == b for a, b in zip(response, sorted(prompt), strict=False)))


def inclusion_ordering_reward(prompt: list[int], response: list[int]) -> float:
    """Prompt digits present in the response, plus neighbour pairs in non-decreasing order."""
    inclusion = sum(digit in response for digit in prompt)
    ordering = sum(a <= b for a, b in zip(response, response[1:], strict=False))
    return float(inclusion + ordering)


def rewards(prompts: torch.Tensor, responses: torch.Tensor, reward_fn: Callable) -> torch.Tensor:
    """reward_fn(prompt, response) for every response: [B, G]."""
    return torch.tensor([[reward_fn(p.tolist(), r.tolist()) for r in group]
                         for p, group in zip(prompts, responses, strict=True)],
                        dtype=torch.float32)


def train(compute_deltas: Callable, compute_loss: Callable, delta_mode: str, loss_mode: str = "naive",
          reward_fn: Callable = inclusion_ordering_reward, steps: int = 120, batch: int = 16, G: int = 8,
          lr: float = 0.05, seed: int = 0) -> list[float]:
    """Train a fresh ToyPolicy with the notebook's ``compute_deltas`` / ``compute_loss``; return the
    mean reward of every step's samples. The old policy of the ratio losses is the sampling policy."""
    torch.manual_seed(seed)
    policy = ToyPolicy(seed=seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    curve = []
    for _ in range(steps):
        prompts = torch.randint(VOCAB, (batch, LENGTH))  # [B, L]
        responses = sample(policy, prompts, G)  # [B, G, L]
        scores = rewards(prompts, responses, reward_fn)  # [B, G]
        logp = logprobs(policy, prompts, responses)  # [B, G]
        loss = compute_loss(logp, compute_deltas(scores, delta_mode), loss_mode, old_logp=logp.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(scores.mean().item())
    return curve
