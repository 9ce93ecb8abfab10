"""Cell 6, train's loop (1 point), with a stand-in grpo_step of known gradient: one call per step with
cfg.batch_prompts prompts of the given list, fresh batches, zero gradients on entry, the LoRA weights
updated after every step and the base untouched, and the gradient clipped to cfg.max_grad_norm. Default
comparison, and a judge's rules for the batches drawn and the clipped step's size."""
import dataclasses

import torch
from _training import CONFIG, LR, POOL, train_with_stand_in
from _world import trainable

TODO = "Cell 6, train (the loop)"
BATCHES, CLIPPED = "different batches drawn in 3 steps", "largest weight change of one step clipped to 1e-12"


def moved(calls: list, after: dict) -> list[bool]:
    """After each grpo_step call: did the trainable weights change before the next call (or the end)?"""
    later = [c["weights"] for c in calls[1:]] + [after]
    return [any(not torch.equal(w, b[n]) for n, w in c["weights"].items()) for c, b in zip(calls, later, strict=False)]


def largest_change(policy, calls: list):
    """The largest change of a trainable weight from the first call's entry to the end (None: no call)."""
    if not calls:
        return None
    start = calls[0]["weights"]
    return max(float((p.detach() - start[n]).abs().max()) for n, p in trainable(policy).items())


def probe(nb, observe):
    calls = []
    policy, frozen, _ = train_with_stand_in(nb, observe, "train: 3 steps of 2 prompts", CONFIG, calls)
    observe.value("calls to grpo_step", len(calls))
    observe.value("prompts per call", [len(c["prompts"]) for c in calls])
    observe.value("every prompt from the given list", all(set(c["prompts"]) <= set(POOL) for c in calls))
    observe.value(BATCHES, len({tuple(c["prompts"]) for c in calls}))
    observe.value("gradient found on entry to each call", [c["gradient"] for c in calls])
    final = {n: p.detach() for n, p in trainable(policy).items()}
    observe.value("weights updated after each call", moved(calls, final))
    base = [p.detach() for p in policy.parameters() if not p.requires_grad]
    observe.value("base weights unchanged", len(base) == len(frozen) and all(map(torch.equal, base, frozen)))
    clip_calls = []
    clip_policy, _, _ = train_with_stand_in(nb, observe, "train: 1 step clipped to 1e-12",
                                            dataclasses.replace(CONFIG, steps=1, max_grad_norm=1e-12), clip_calls)
    observe.value(CLIPPED, largest_change(clip_policy, clip_calls))


def judge(check):
    for label in check.expected:
        if label not in (BATCHES, CLIPPED):
            check.same(label)
    check.expect(isinstance(check.got(BATCHES), int) and check.got(BATCHES) > 1,
                 "train drew the same batch at every step: draw a new batch of prompts each step")
    change = check.got(CLIPPED)
    check.expect(isinstance(change, float) and change < LR / 20,
                 f"{CLIPPED}: {change if change is None else f'{change:.3g}'}, expected far below lr = {LR:g}: "
                 "clip the gradient norm to cfg.max_grad_norm (clip_grad_norm_) before optimizer.step()")


HINTS = {
    "calls to grpo_step": "call grpo_step once per step, cfg.steps times",
    "prompts per call": "pass cfg.batch_prompts prompts to each grpo_step call",
    "every prompt from the given list": "draw each batch from the prompts train was given",
    "gradient found on entry to each call": "zero the gradients before each grpo_step (they add up otherwise)",
    "weights updated after each call": "optimizer.step() after each grpo_step, on the trainable (LoRA) weights",
    "base weights unchanged": "optimize only the trainable (LoRA) weights: the frozen base must not change",
}
