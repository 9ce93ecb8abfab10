"""Cell 6, train's loop (1 point), with a stand-in grpo_step whose gradient depends on the weights: where 3
steps take the LoRA weights, and where 1 step clipped to 1e-12 takes them, compared with the reference's
(within 1 % of the 3 steps' largest value: AdamW's default weight decay is allowed). They earn the point; the
counts and flags (a call per step with cfg.batch_prompts prompts of the given list, fresh batches, zero
gradients on entry, the base untouched) only withhold it, with a hint."""
import dataclasses

import torch
from _training import CONFIG, POOL, change, train_with_stand_in

TODO = "Cell 6, train (the loop)"
POINTS = 1
BATCHES = "different batches drawn in 3 steps"
MOVED, CLIPPED = "where 3 steps took the LoRA weights", "where 1 step clipped to 1e-12 took the LoRA weights"
SHARE = 0.01


def probe(nb, observe):
    calls = []
    policy, frozen, _, before = train_with_stand_in(nb, observe, "train: 3 steps of 2 prompts", CONFIG, calls)
    observe.sketch(MOVED, change(policy, before))
    observe.value("calls to grpo_step", len(calls))
    observe.value("prompts per call", [len(c["prompts"]) for c in calls])
    observe.value("every prompt from the given list", all(set(c["prompts"]) <= set(POOL) for c in calls))
    observe.value(BATCHES, len({tuple(c["prompts"]) for c in calls}))
    observe.value("gradient found on entry to each call", [c["gradient"] for c in calls])
    base = [p.detach() for p in policy.parameters() if not p.requires_grad]
    observe.value("base weights unchanged", len(base) == len(frozen) and all(map(torch.equal, base, frozen)))
    clipped, _, _, start = train_with_stand_in(nb, observe, "train: 1 step clipped to 1e-12",
                                               dataclasses.replace(CONFIG, steps=1, max_grad_norm=1e-12), [])
    observe.sketch(CLIPPED, change(clipped, start))


def near(check, label: str, scale: float) -> None:
    got, want = check.got(label), check.want(label)
    far = [i for i, (g, w) in enumerate(zip(got, want, strict=False))
           if not (isinstance(g, (int, float)) and abs(g - w) <= SHARE * scale)] if isinstance(got, list) else [0]
    check.expect(isinstance(got, list) and len(got) == len(want) and not far,
                 f"{label}: {'got ' + format(got[far[0]], '.4g') if far and isinstance(got, list) else 'no value'}"
                 f"{f' at index {far[0]}, expected {want[far[0]]:.4g}' if far and len(want) > far[0] else ''}. "
                 f"What to check: {HINTS[label]}")


def judge(check):
    scale = max(abs(x) for x in check.want(MOVED))
    near(check, MOVED, scale)
    near(check, CLIPPED, scale)
    for label in check.expected:
        if label not in (BATCHES, MOVED, CLIPPED):
            check.same(label)
    check.expect(isinstance(check.got(BATCHES), int) and check.got(BATCHES) > 1,
                 "train drew the same batch at every step: draw a new batch of prompts each step")


HINTS = {
    MOVED: "AdamW over the trainable (LoRA) weights at cfg.lr; each step: zero the gradients, one grpo_step on "
           "cfg.batch_prompts prompts of the list, clip, optimizer.step()",
    CLIPPED: "clip the gradient norm to cfg.max_grad_norm (clip_grad_norm_) after grpo_step, before optimizer.step()",
    "calls to grpo_step": "call grpo_step once per step, cfg.steps times",
    "prompts per call": "pass cfg.batch_prompts prompts to each grpo_step call",
    "every prompt from the given list": "draw each batch from the prompts train was given",
    "gradient found on entry to each call": "zero the gradients before each grpo_step (they add up otherwise)",
    "base weights unchanged": "optimize only the trainable (LoRA) weights: the frozen base must not change",
}
