"""What a tiny model build can do before any RL: the numbers to look at before re-baselining.

    python bench/probe_tiny_model.py [MODEL_DIR] [--n 120]

Prints, for each task family the warm-up covers, greedy and sampled rates on prompts that the
warm-up never used: the ``<think>/<answer>`` template on unseen phrasings (grpo_format), the
r1_zero format and answer rewards on the tiny-MATH validation split (math_grpo), and how often
a digit-sorting answer is an exact sort or a copy of the prompt (tiny_grpo's worked example).
The GRPO recipes need some of each (a few tens of percent), not none and not all.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from helpers import grpo, lm  # noqa: E402
from helpers import math_tasks as course_math  # noqa: E402

# Phrasings neither the warm-up nor the grpo_format notebook uses.
PROBE_PHRASINGS = ("What is the sum of {a} and {b}?", "Please add {a} and {b}.", "Add {b} to {a}.",
                   "How much do {a} and {b} make together?")
_BODY = r"(?:(?!</?(?:think|answer)>)[\s\S])*"
TEMPLATE = re.compile("<think>\n" + _BODY + "\n</think>\n<answer>\n" + _BODY + "\n</answer>")


def chat_prompts(tokenizer, n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    prompts = []
    for i in range(n):
        question = PROBE_PHRASINGS[i % len(PROBE_PHRASINGS)].format(a=rng.randint(10, 99), b=rng.randint(1, 9))
        messages = [{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}, {"role": "user", "content": question}]
        prompts.append(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    return prompts


def sort_prompts(n: int, seed: int = 11) -> list[tuple[str, list[int]]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        digits = [rng.randint(0, 9) for _ in range(rng.randint(3, 6))]
        rows.append((lm.SORT_PROMPT_TEMPLATE.format(digits=" ".join(map(str, digits))), digits))
    return rows


def rates(model, tokenizer, n: int, do_sample: bool) -> dict:
    torch.manual_seed(0)
    out = {}
    chat = grpo.sample_completions(model, tokenizer, chat_prompts(tokenizer, n), 1, 48, do_sample=do_sample)
    out["format"] = sum(TEMPLATE.fullmatch(t.strip()) is not None for t in chat.completions) / n
    records = course_math.load_math("validation", "tiny")[:n]
    math_prompts = [course_math.format_r1_zero(r["problem"]) for r in records]
    math_rollout = grpo.sample_completions(model, tokenizer, math_prompts, 1, 64, do_sample=do_sample)
    rewards = [course_math.r1_zero_reward_fn(t, r["answer"])
               for t, r in zip(math_rollout.completions, records, strict=True)]
    out["math_format"] = sum(r["format_reward"] for r in rewards) / n
    out["math_answer"] = sum(r["answer_reward"] for r in rewards) / n
    rows = sort_prompts(n)
    sort_rollout = grpo.sample_completions(model, tokenizer, [p for p, _ in rows], 1, 16, do_sample=do_sample)
    exact = copy = 0
    for text, (_, digits) in zip(sort_rollout.completions, rows, strict=True):
        got = text.split()
        exact += got == [str(d) for d in sorted(digits)]
        copy += got == [str(d) for d in digits] and digits != sorted(digits)
    out["sort_exact"], out["sort_copy"] = exact / n, copy / n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", nargs="?", default=None, help="default: the shipped tiny model")
    parser.add_argument("--n", type=int, default=120)
    args = parser.parse_args()
    folder = args.model_dir or str(lm.resolve_model("tiny", "unused"))
    tokenizer = lm.load_tokenizer(folder)
    model = lm.load_model(folder)
    started = time.perf_counter()
    for mode, sample in (("greedy", False), ("sampled", True)):
        row = rates(model, tokenizer, args.n, sample)
        print(f"{mode:8s} " + "  ".join(f"{key}={value:.2f}" for key, value in row.items()))
    print(f"({args.n} prompts per family, {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
