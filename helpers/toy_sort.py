"""tiny_grpo's warm-up (Part 1): a toy sorting policy and the lecture's policy-gradient code.

A prompt is ``LENGTH`` digits from ``0..VOCAB-1``; the right response is those digits sorted. The
policy is not a language model: it reads the whole prompt once and picks every response position
independently, so sampling and scoring take a few lines and a training run takes seconds.

Read the second half, "The lecture's code": the update weights (``_lecture_deltas``), the three
losses (``compute_loss``), why the old policy is frozen, the k1 and k3 estimates of KL, and the
training run that compares the update weights. Part 1 of the notebook runs each of them.

Shapes: B prompts, G responses per prompt, L positions, V digits.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

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


# --------------------------------------------------------------------------------------
# The lecture's code
# --------------------------------------------------------------------------------------

DELTA_MODES = ("rewards", "centered_rewards", "normalized_rewards", "max_rewards")
LOSS_MODES = ("naive", "unclipped", "clipped")


def _lecture_deltas(rewards: torch.Tensor, mode: str) -> torch.Tensor:
    """The weight of each sample's log-probability in the update: rewards [B, G] -> deltas [B, G].
    (The lecture calls it ``compute_deltas``; private here, as its ``normalized_rewards`` is a graded TODO's
    formula: read it, write your own.)

    ``rewards``: every rewarded sample pushed up; ``centered_rewards``: minus the group mean (a
    baseline: below-average samples pushed down, a tied group gives nothing);
    ``normalized_rewards``: also divided by the group's std (GRPO); ``max_rewards``: only the
    group's best keep their reward.
    """
    centered = rewards - rewards.mean(-1, keepdim=True)  # [B, G]
    if mode == "rewards":
        return rewards
    if mode == "centered_rewards":
        return centered
    if mode == "normalized_rewards":
        return centered / (rewards.std(-1, keepdim=True) + 1e-5)  # [B, G]
    if mode == "max_rewards":
        return torch.where(rewards == rewards.max(-1, keepdim=True).values, rewards, 0.0)  # [B, G]
    raise ValueError(f"unknown delta mode {mode!r}; use one of {DELTA_MODES}")


def compute_loss(logp: torch.Tensor, deltas: torch.Tensor, mode: str, old_logp: torch.Tensor | None = None,
                 clip: float = 0.2) -> torch.Tensor:
    """logp, deltas [B, G] -> a scalar loss. ``naive``: -mean(delta * log pi); for samples of an older
    policy, with ratio = pi / pi_old: ``unclipped`` -mean(ratio * delta), ``clipped`` PPO's
    -mean(min(ratio * delta, clip(ratio, 1 - clip, 1 + clip) * delta)). At ratio 1 all three
    have the same gradient; old_logp must be a constant (see ``frozen_ratio_gradient``)."""
    if mode == "naive":
        return -(deltas * logp).mean()
    if mode not in LOSS_MODES:
        raise ValueError(f"unknown loss mode {mode!r}; use one of {LOSS_MODES}")
    ratio = torch.exp(logp - old_logp)  # [B, G]
    bounded = ratio.clamp(1 - clip, 1 + clip) if mode == "clipped" else ratio  # [B, G]
    return -torch.minimum(ratio * deltas, bounded * deltas).mean()


def show_weights_and_losses(policy: ToyPolicy, prompts: torch.Tensor, responses: torch.Tensor,
                            rewards: torch.Tensor) -> None:
    """Print each update weight of the sampled responses, then the three losses with the
    normalized weights, pretending an older policy (another seed) drew the samples."""
    for mode in DELTA_MODES:
        print(f"{mode:19s}", [round(x, 2) for x in _lecture_deltas(rewards, mode)[0].tolist()])
    logp = logprobs(policy, prompts, responses)  # [B, G]
    with torch.no_grad():  # the old policy is a constant
        old_logp = logprobs(ToyPolicy(seed=1), prompts, responses)  # [B, G]
    deltas = _lecture_deltas(rewards, "normalized_rewards")  # [B, G]
    print(" | ".join(f"{m} loss {compute_loss(logp, deltas, m, old_logp):.3f}" for m in LOSS_MODES))


def baseline_variance() -> None:
    """Print how a baseline changes the update weights' spread, and the variance of a one-sample
    gradient estimate for three baselines b (its mean never changes)."""
    raw = torch.tensor([11.0, 9.0, 0.0, 2.0])  # (s1,a1) (s1,a2) (s2,a1) (s2,a2)
    baselined = raw - torch.tensor([10.0, 10.0, 1.0, 1.0])  # b(s1) = 10, b(s2) = 1
    print(f"std of the weights: raw {raw.std():.3f}, baselined {baselined.std():.3f}")
    # one state, 3 actions, pi = softmax(0.3 * f): one parameter, so the score is a number per action
    f, reward = torch.tensor([1.0, 0.0, -1.0]), torch.tensor([11.0, 9.0, 10.0])
    probs = torch.softmax(0.3 * f, 0)  # [3]
    score = f - (probs * f).sum()  # d/dtheta log pi(a) [3]
    b_star = (probs * score**2 * reward).sum() / (probs * score**2).sum()
    for name, b in (("0", 0.0), ("E[R]", (probs * reward).sum()), ("b*", b_star)):
        g = score * (reward - b)  # the estimate for each action [3]
        mean, var = (probs * g).sum(), (probs * g**2).sum() - (probs * g).sum() ** 2
        print(f"b = {name:4s} {float(b):6.2f}: E[g] = {mean:.4f}, Var[g] = {var:.4f}")


def frozen_ratio_gradient() -> None:
    """Print d ratio / dw at ratio 1 with p_old on the autograd graph (0: nothing is learned) and
    computed under torch.no_grad() (the policy gradient)."""
    w = torch.tensor(2.0, requires_grad=True)
    (torch.sigmoid(w) / torch.sigmoid(w)).backward()  # p_old still on the graph
    print(f"p_old tracked: d ratio/dw = {w.grad.item():.4f}")
    w.grad = None
    with torch.no_grad():
        p_old = torch.sigmoid(w)  # a constant
    (torch.sigmoid(w) / p_old).backward()
    print(f"p_old frozen:  d ratio/dw = {w.grad.item():.4f} (= 1 - sigmoid(2))")


def kl_estimators(samples: int = 20_000) -> None:
    """Print the exact KL(pi || ref) of two random 6-way distributions and the mean, minimum and std
    of the k1 (-log u) and k3 (u - 1 - log u) estimates at samples of pi, u = ref(x) / pi(x)."""
    torch.manual_seed(0)
    p, q = torch.softmax(torch.randn(6), 0), torch.softmax(torch.randn(6), 0)  # policy, reference [6]
    log_u = (q / p).log()[torch.multinomial(p, samples, replacement=True)]  # [samples]
    print(f"exact KL {(p * (p / q).log()).sum():.4f}")
    for name, k in (("k1", -log_u), ("k3", log_u.exp() - 1 - log_u)):
        print(f"{name}: mean {k.mean():.4f}, min {k.min():+.3f}, std {k.std():.3f}")


def lecture_demo(seed: int = 4) -> None:
    """The lecture's walk-through on one prompt, [3, 0, 2]: five sampled responses and their rewards,
    each update weight and the three losses, the frozen ratio's gradient, the k1 and k3 estimates."""
    policy, prompt = ToyPolicy(), torch.tensor([[3, 0, 2]])  # prompt [1, L]
    torch.manual_seed(seed)
    responses = sample(policy, prompt, G=5)  # [1, 5, L]
    scores = rewards(prompt, responses, inclusion_ordering_reward)  # [1, 5]
    print("responses", responses[0].tolist())  # their rewards: the first row below
    show_weights_and_losses(policy, prompt, responses, scores)
    frozen_ratio_gradient()
    kl_estimators()


def compare_deltas(steps: int = 120):
    """Train one fresh policy per update weight (naive loss) and plot each run's mean reward
    (10-step moving average); returns the figure."""
    import matplotlib.pyplot as plt  # here: grading imports this module and never plots

    fig, ax = plt.subplots(figsize=(7, 3))
    for mode in DELTA_MODES:
        curve = train(_lecture_deltas, compute_loss, ToyRun(mode, steps=steps))
        smooth = [sum(curve[max(0, i - 9): i + 1]) / len(curve[max(0, i - 9): i + 1]) for i in range(len(curve))]
        ax.plot(smooth, label=f"{mode} (last 20 steps: {sum(curve[-20:]) / 20:.2f})")
    ax.set(xlabel="step", ylabel="mean reward (10-step average)", title="Toy sorting")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig


@dataclass(frozen=True)
class ToyRun:
    """One training run of the toy policy (:func:`train`)."""

    delta_mode: str
    """Which update weight (one of ``DELTA_MODES``)."""
    loss_mode: str = "naive"
    reward_fn: Callable = inclusion_ordering_reward
    steps: int = 120
    batch: int = 16
    G: int = 8
    lr: float = 0.05
    seed: int = 0


def train(deltas_fn: Callable, compute_loss: Callable, run: ToyRun) -> list[float]:
    """Train a fresh ToyPolicy with ``deltas_fn`` (the lecture's: ``_lecture_deltas``) and ``compute_loss``; return
    the mean reward of every step's samples. The old policy of the ratio losses is the sampling policy."""
    torch.manual_seed(run.seed)
    policy = ToyPolicy(seed=run.seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=run.lr)
    curve = []
    for _ in range(run.steps):
        prompts = torch.randint(VOCAB, (run.batch, LENGTH))  # [B, L]
        responses = sample(policy, prompts, run.G)  # [B, G, L]
        scores = rewards(prompts, responses, run.reward_fn)  # [B, G]
        logp = logprobs(policy, prompts, responses)  # [B, G]
        loss = compute_loss(logp, deltas_fn(scores, run.delta_mode), run.loss_mode, old_logp=logp.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(scores.mean().item())
    return curve
