"""The train probes' world: 40 sorting prompts, the tests' config, and a stand-in grpo_step whose gradient
depends on the weights train left (the gradient of 5 |w - t|: norm 5 at every call, towards a target t), so
that what train records and where its optimizer takes the weights can only match the reference's if train
really zeroes and steps. Its norm being the same at every call, clipping it to 1 scales every step alike,
which AdamW does not see: a loop that forgets to clip loses only the clipping check; train is graded alone."""
import contextlib
import io

import torch
from _world import SORT, StepConfig, fixed_rollout, tiny_policy, tokenizer, trainable

POOL = [SORT.format(digits=" ".join(str((7 * i + j) % 10) for j in range(3 + i % 4))) for i in range(40)]
LR = 1e-3
NORM = 5.0
"""The stand-in's gradient norm at every call (above CONFIG's max_grad_norm of 1: clipping acts, alike each step)."""
CONFIG = StepConfig(steps=3, batch_prompts=2, group_size=2, micro_batch=4, log_every=1, lr=LR)


def quadratic_step(policy, tok, calls: list):
    """A grpo_step that records each call (its prompts, the gradient it finds, the weights) and adds the gradient
    of 5 |w - t|, t a fixed target (another for a batch of another size or with prompts from elsewhere); it
    returns loss = w . t, kl = |w - t|^2 / n and rewards [0, 1, 1, 0.5 k] at its k-th call."""
    weights = trainable(policy)
    draw = torch.Generator().manual_seed(3)
    direction = {name: torch.randn(p.shape, generator=draw) * 0.1 for name, p in weights.items()}
    rollout = fixed_rollout(tok, POOL[:2], 2, 8)            # for a train that logs from the rollout

    def grpo_step(model, tokenizer, prompts, cfg):
        k = len(calls) + 1
        calls.append({"prompts": list(prompts), "weights": {n: p.detach().clone() for n, p in weights.items()},
                      "gradient": sum(float(p.grad.abs().sum()) for p in weights.values() if p.grad is not None)})
        scale = len(prompts) / 2 if set(prompts) <= set(POOL) else -1.0
        gap = sum(((p - scale * direction[n]) ** 2).sum() for n, p in weights.items())
        (NORM * gap.sqrt()).backward()
        with torch.no_grad():
            dot = sum((p * direction[n]).sum() for n, p in weights.items())
            size = sum(p.numel() for p in weights.values())
        return {"loss": float(dot), "rewards": torch.tensor([0.0, 1.0, 1.0, 0.5 * k]), "advantages": torch.zeros(4),
                "kl": float(gap.detach()) / size, "rollout": rollout}

    return grpo_step


@contextlib.contextmanager
def captured():
    """What the block prints (stdout and stderr), as a list holding one string once it ends."""
    printed, buffer = [], io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            yield printed
        finally:
            printed.append(buffer.getvalue())


def train_with_stand_in(nb, observe, label: str, cfg, calls: list, printed=None):
    """Run the notebook's train on a fresh tiny policy with the stand-in step, observed under ``label``;
    (policy, its frozen weights before, train's records or None, its LoRA weights before)."""
    tok, policy, done = tokenizer(), tiny_policy(), []
    frozen = [p.detach().clone() for p in policy.parameters() if not p.requires_grad]
    before = {n: p.detach().clone() for n, p in trainable(policy).items()}
    with nb.replaced(grpo_step=quadratic_step(policy, tok, calls)), captured() as output:
        observe(label, lambda: done.append(nb.train(policy, tok, list(POOL), cfg)))
    if printed is not None:
        printed.extend(output)
    return policy, frozen, (done[0] if done else None), before


def change(policy, before: dict) -> torch.Tensor:
    """Where train took the LoRA weights, as one vector: after minus before."""
    return torch.cat([(p.detach() - before[n]).reshape(-1) for n, p in trainable(policy).items()])      # [n_lora]
