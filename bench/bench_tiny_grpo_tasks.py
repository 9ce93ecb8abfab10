"""Which toy tasks can tiny_grpo's CPU model learn? The reference GRPO on each suggested task.

    python bench/bench_tiny_grpo_tasks.py                      # every task, seed 0, the notebook's config
    python bench/bench_tiny_grpo_tasks.py --tasks sort descending --seeds 0 1 --steps 50
    python bench/bench_tiny_grpo_tasks.py --out bench/results/tiny_grpo_tasks.json

For each task it loads a fresh tiny model with a fresh LoRA adapter, trains it with the solution
notebook's own ``grpo_step`` / ``train`` (executed from solutions/tiny_grpo/tiny_grpo.ipynb, so
nothing here is a second copy of an answer) on 1000 prompts, and measures the greedy exact-answer
rate on 200 held-out prompts with the adapter off (base) and on (fine-tuned), plus the share of
sampled completions (G = 8, temperature 1) that are exact before training: GRPO can only
reinforce what the model already samples.

The sorting task is the notebook's worked example (its reference cells); the others are the
tasks the notebook suggests, written here as a student might. The notebook quotes the table in
``--out``; tests/test_tiny_grpo.py checks that the notebook's table matches that file. Runs on
one thread (like the notebook in the tiny profile); wrap it in the machine's heavy-job lock.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import re
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("COURSE_PROFILE", "tiny")

import nbformat  # noqa: E402
import torch  # noqa: E402

from helpers import grpo, lm, profiles, tiny_grpo_tools  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SOLUTION = REPO / "solutions" / "tiny_grpo" / "tiny_grpo.ipynb"
ANSWER_CELLS = ("dataset", "reward", "advantages", "loss", "logprobs", "grpo_step", "train")


def _strip(source: str) -> str:
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)


def reference_namespace(tokenizer) -> dict:
    """The solution's Config and answer cells, executed with the notebook's imports (no model loaded)."""
    notebook = nbformat.read(SOLUTION, as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in notebook.cells}
    model_cell = cells["model"]
    namespace = {"torch": torch, "random": random, "re": re, "math": math, "time": time, "json": json,
                 "dataclasses": dataclasses, "dataclass": dataclasses.dataclass, "grpo": grpo, "lm": lm,
                 "profiles": profiles, "PROFILE": "tiny", "tokenizer": tokenizer, "tools": tiny_grpo_tools}
    exec(model_cell[: model_cell.index("CFG = ")], namespace)  # noqa: S102 - the Config dataclass
    exec(model_cell[model_cell.index("def as_model_prompt"):], namespace)  # noqa: S102
    namespace["CFG"] = namespace["Config"]()
    for gid in ANSWER_CELLS:
        exec(_strip(cells[gid]), namespace)  # noqa: S102 - our own solution cells
    return namespace


# --- the suggested tasks, written as a student might ---------------------------------------------

def _digit_prompts(n, seed, exclude, lengths, template="Sort the digits: {}\nSorted:"):
    rng, taken, prompts = random.Random(seed), set(exclude), []
    while len(prompts) < n:
        prompt = template.format(" ".join(str(rng.randint(0, 9)) for _ in range(rng.choice(lengths))))
        if prompt not in taken:
            taken.add(prompt)
            prompts.append(prompt)
    return prompts


def _digits(prompt):
    return re.search(r": (\d(?: \d)*)\n", prompt).group(1).split()


def _exact_reward(expected_answer):
    def get_reward(prompts, responses):
        return [float(r.split() == expected_answer(p).split()) for p, r in zip(prompts, responses, strict=True)]
    return get_reward


def descending_task(tokenizer):
    """'Sort the digits: 6 0 4\\nSorted:' -> '6 4 0': the prompt the model knows, the other order."""
    def make_prompts(n, seed, exclude=()):
        return _digit_prompts(n, seed, exclude, lengths=(3, 4))

    def expected_answer(prompt):
        return " ".join(sorted(_digits(prompt), reverse=True))
    return make_prompts, expected_answer, 16


def addition_task(tokenizer):
    """The chat addition question -> '<think> 27 + 4 = 31 </think> <answer> 31 </answer>' and nothing after."""
    def make_prompts(n, seed, exclude=()):
        rng, taken, prompts = random.Random(seed), set(exclude), []
        while len(prompts) < n:
            a, b = rng.randint(10, 99), rng.randint(1, 9)
            question = rng.choice(lm.ADDITION_QUESTION_TEMPLATES).format(a=a, b=b)
            prompt = tokenizer.apply_chat_template(
                [{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}, {"role": "user", "content": question}],
                tokenize=False, add_generation_prompt=True)
            if prompt not in taken:
                taken.add(prompt)
                prompts.append(prompt)
        return prompts

    def expected_answer(prompt):
        question = prompt.split("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]
        a, b = (int(x) for x in re.findall(r"\d+", question)[:2])
        return f"<think> {a} + {b} = {a + b} </think> <answer> {a + b} </answer>"
    return make_prompts, expected_answer, 24


def reverse_task(tokenizer):
    """'Reverse the digits: 6 0 4\\nReversed:' -> '4 0 6': a wording the model never saw."""
    def make_prompts(n, seed, exclude=()):
        return _digit_prompts(n, seed, exclude, lengths=(3, 4, 5, 6), template="Reverse the digits: {}\nReversed:")

    def expected_answer(prompt):
        return " ".join(reversed(_digits(prompt)))
    return make_prompts, expected_answer, 16


TASKS = {"sort": None, "addition": addition_task, "descending": descending_task, "reverse": reverse_task}


def exact_rate(model, tokenizer, prompts, expected_answer, max_new_tokens, batch=100):
    hits = 0
    for i in range(0, len(prompts), batch):
        part = prompts[i: i + batch]
        out = grpo.sample_completions(model, tokenizer, part, 1, max_new_tokens, do_sample=False)
        hits += sum(c.split() == expected_answer(p).split() for p, c in zip(part, out.completions, strict=True))
    return hits / len(prompts)


def sampled_rate(model, tokenizer, prompts, expected_answer, max_new_tokens, group=8):
    torch.manual_seed(0)
    out = grpo.sample_completions(model, tokenizer, prompts, group, max_new_tokens, temperature=1.0)
    right = [c.split() == expected_answer(prompts[i // group]).split() for i, c in enumerate(out.completions)]
    groups = [any(right[i * group:(i + 1) * group]) for i in range(len(prompts))]
    return sum(right) / len(right), sum(groups) / len(groups)


def run_task(name: str, seed: int, steps: int | None) -> dict:
    model_name = lm.resolve_model("tiny", "unused")
    tokenizer = lm.load_tokenizer(model_name)
    ns = reference_namespace(tokenizer)
    if TASKS[name] is None:
        make_prompts, expected_answer, max_new = ns["make_prompts"], ns["expected_answer"], ns["CFG"].max_new_tokens
        get_reward = ns["get_reward"]
    else:
        make_prompts, expected_answer, max_new = TASKS[name](tokenizer)
        get_reward = _exact_reward(expected_answer)
    ns["get_reward"] = get_reward  # what the reference grpo_step scores with
    cfg = dataclasses.replace(ns["CFG"], seed=seed, max_new_tokens=max_new, steps=steps or ns["CFG"].steps)
    profiles.seed_everything(seed)
    base = lm.load_model(model_name, quantize_4bit=False)
    model = lm.add_lora(base, r=cfg.lora_r, alpha=2 * cfg.lora_r, dropout=0.0, target_modules="all-linear")
    train_prompts = make_prompts(cfg.train_size, seed=seed)
    held_out = make_prompts(cfg.eval_size, seed=seed + 1, exclude=train_prompts)
    with grpo.adapter_disabled(model):
        before = exact_rate(model, tokenizer, held_out, expected_answer, max_new)
        sampled, groups = sampled_rate(model, tokenizer, held_out[:64], expected_answer, max_new)
    started = time.perf_counter()
    profiles.seed_everything(seed)
    history = ns["train"](model, tokenizer, train_prompts, cfg)
    seconds = time.perf_counter() - started
    after = exact_rate(model, tokenizer, held_out, expected_answer, max_new)
    tail = max(1, len(history) // 5)  # the first and last fifth of training
    first, last = history[:tail], history[-tail:]
    return {"task": name, "seed": seed, "steps": len(history), "exact_before": before, "exact_after": after,
            "sampled_exact_before": sampled, "groups_with_a_hit_before": groups,
            "train_reward_first": statistics.mean(r["reward_mean"] for r in first),
            "train_reward_last": statistics.mean(r["reward_mean"] for r in last), "train_seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--steps", type=int, default=None, help="default: the notebook's tiny Config.steps")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(1)  # the notebook's tiny-profile setting
    rows = []
    for name in args.tasks:
        for seed in args.seeds:
            row = run_task(name, seed, args.steps)
            rows.append(row)
            print(f"{name:11s} seed {seed}: held-out exact {row['exact_before']:.1%} -> {row['exact_after']:.1%} "
                  f"(sampled exact before {row['sampled_exact_before']:.1%}, groups with a hit "
                  f"{row['groups_with_a_hit_before']:.0%}; train reward {row['train_reward_first']:.2f} -> "
                  f"{row['train_reward_last']:.2f}; {row['steps']} steps in {row['train_seconds']:.0f} s)", flush=True)
    if args.out:
        args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
