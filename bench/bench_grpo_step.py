"""Time one GRPO-shaped step in the tiny profile, split into generation / scoring / backward.

    python bench/bench_grpo_step.py [--prompts 8] [--group 4] [--new-tokens 48] [--repeats 3]

Prints the median seconds of each phase and its share of the step, so a change to the
scaffolding shows up as a ratio rather than as a timed test.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch

from helpers import grpo, lm, profiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    profiles.seed_everything(0)
    model, tokenizer = lm.load_policy("tiny", "unused-in-tiny", lora=dict(r=8, alpha=16, dropout=0.0))
    messages = lambda q: [{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}, {"role": "user", "content": q}]
    prompts = [
        tokenizer.apply_chat_template(messages(f"What is {10 + i} plus {i % 9 + 1}?"), tokenize=False,
                                      add_generation_prompt=True)
        for i in range(args.prompts)
    ]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    phases = {"generation": [], "scoring": [], "backward": []}
    for _ in range(args.repeats + 1):  # the first round warms up kernels and allocators
        t0 = time.perf_counter()
        rollout = grpo.sample_completions(model, tokenizer, prompts, args.group, args.new_tokens, temperature=1.0)
        t1 = time.perf_counter()
        new = grpo.token_logprobs(model, rollout.sequences, rollout.attention_mask, rollout.prompt_width)
        ref = grpo.reference_token_logprobs(model, rollout.sequences, rollout.attention_mask, rollout.prompt_width)
        t2 = time.perf_counter()
        mask = rollout.completion_mask.float()  # [N, T]
        surrogate = ((new - ref.detach()) * mask).sum() / mask.sum()  # a stand-in objective of the same shape
        optimizer.zero_grad()
        surrogate.backward()
        optimizer.step()
        t3 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            phases[name].append(seconds)
    medians = {name: statistics.median(times[1:]) for name, times in phases.items()}
    total = sum(medians.values())
    print(f"tiny profile, {args.prompts} prompts x {args.group} samples, {args.new_tokens} new tokens, "
          f"{torch.get_num_threads()} threads")
    for name, seconds in medians.items():
        print(f"  {name:<10} {seconds:7.3f} s  {seconds / total:6.1%}")
    print(f"  {'step':<10} {total:7.3f} s  "
          f"ratio generation/backward = {medians['generation'] / medians['backward']:.1f}")


if __name__ == "__main__":
    main()
