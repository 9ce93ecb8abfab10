"""Seconds per ``sample_completions`` call with and without the shared-prompt-prefix prefill (CPU).

    python bench/bench_prefix_sharing.py [--repeats 5] [--threads 1]

The tiny model with a fresh LoRA adapter (as in math_grpo's tiny profile) draws the notebook's
three kinds of batch: a validation pass (100 r1_zero questions x 1, 48 new tokens), a GRPO
rollout (2 questions x 8, 48 tokens) and Problem 16's keyword data (126 prompts x 6, 32
tokens). Each repeat runs both ways back to back from the same seed, alternating which goes
first, so a busy machine slows both alike; prints the median seconds, their ratio, and whether
the two rollouts were identical (the layout is rearranged back to left padding, and the two
prefills' logits agree to rounding, so only a near-tie could make a token differ).
Asserts nothing about time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from helpers import grpo, lm, math_tasks, tiny_model  # noqa: E402

KEYWORDS = ("work", "so", "let", "me", "it", "the", "out")
KEYWORD_TEMPLATES = ("Write a sentence that includes the words: {a}, {b}.",
                     "Use the words {a} and {b} in one sentence.",
                     "Write one line containing the words {a} and {b}.")


def batches() -> dict[str, tuple[list[str], int, int]]:
    """name -> (prompts, generations per prompt, max new tokens)."""
    questions = [row["problem"] for row in math_tasks.load_math("validation", "tiny")]
    keyword = [t.format(a=a, b=b) for a in KEYWORDS for b in KEYWORDS if a != b for t in KEYWORD_TEMPLATES]
    return {
        "validation 100 x 1": ([math_tasks.format_r1_zero(q) for q in questions[:100]], 1, 48),
        "rollout 2 x 8": ([math_tasks.format_r1_zero(q) for q in questions[100:102]], 8, 48),
        "keyword data 126 x 6": ([math_tasks.format_r1_zero(q) for q in keyword], 6, 32),
    }


def draw(policy, tokenizer, prompts, generations, max_tokens, share: bool) -> tuple[float, grpo.Rollout]:
    """The eager fast sampler (shared prefix prefilled once) or the plain path (left padding)."""
    if share:
        grpo.enable_fast_sampling(policy, tokenizer, mode="eager")
    try:
        torch.manual_seed(0)
        started = time.perf_counter()
        rollout = grpo.sample_completions(policy, tokenizer, prompts, generations, max_tokens)
        return time.perf_counter() - started, rollout
    finally:
        grpo.disable_fast_sampling(policy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (math_grpo's tiny profile uses 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    path = str(tiny_model.ASSET_DIR)
    tokenizer = lm.load_tokenizer(path)
    policy = lm.add_lora(lm.load_model(path), r=16, alpha=32, dropout=0.0)
    print(f"{os.cpu_count()} CPU cores, {args.threads} torch thread(s), {args.repeats} repeats, medians")
    for name, (prompts, generations, max_tokens) in batches().items():
        seconds = {True: [], False: []}
        identical = True
        for repeat in range(args.repeats):
            order = (True, False) if repeat % 2 == 0 else (False, True)
            drawn = {share: draw(policy, tokenizer, prompts, generations, max_tokens, share) for share in order}
            for share, (spent, _) in drawn.items():
                seconds[share].append(spent)
            identical &= torch.equal(drawn[True][1].sequences, drawn[False][1].sequences)
        shared, plain = statistics.median(seconds[True]), statistics.median(seconds[False])
        print(f"{name:22s} left-padded {plain:6.2f} s | shared prefix {shared:6.2f} s | "
              f"ratio {plain / shared:4.2f}x | identical rollouts: {identical}", flush=True)


if __name__ == "__main__":
    main()
