"""Seconds per GRPO step of the math_grpo notebook, split into generation / scoring / backward.

    python bench/bench_math_grpo.py [--profile auto|tiny|full] [--steps 3] [--no-kl]
                                    [--rollout-batch-size N] [--max-tokens N] [--grad-accum N]

Runs the notebook's own ``grpo_train_loop`` (read from solutions/math_grpo/math_grpo.ipynb with
the cells it needs, so the benchmark follows the notebook) on the profile's main-run config:
one warm-up step, then ``--steps`` timed steps. The loop records, per step, the wall-clock
seconds of generation (one ``sample_completions`` call + ``truncate_at_stop``), reward scoring,
and training (old/reference log-prob passes, forward + backward of every microbatch, optimizer
step); the script prints their medians, their shares of the step, completions per second and
``generate`` calls per optimizer step (one, by design). On a CUDA machine the profile is
``full`` (Qwen2.5-Math-1.5B + LoRA, the fast sampler); on a CPU ``tiny``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
NOTEBOOK = REPO / "solutions" / "math_grpo" / "math_grpo.ipynb"
NOTEBOOK_CELLS = ("config", "reward", "stop_helper", "pack_helper", "evaluate", "group_normalized_rewards",
                  "naive_policy_gradient_loss", "grpo_clip_loss", "policy_gradient_loss", "masked_mean",
                  "masked_normalize", "microbatch_train_step", "tokenize_prompt_and_output", "compute_entropy",
                  "get_response_log_probs", "grpo_config", "train_loop")


def notebook_namespace(profile: str) -> dict:
    """Execute the notebook's imports and the cells the train loop needs (markers stripped) in a dict."""
    import types

    import nbformat

    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
             for c in nbformat.read(NOTEBOOK, as_version=4).cells}
    module = types.ModuleType("math_grpo_notebook")
    module.__file__ = str(NOTEBOOK)
    sys.modules[module.__name__] = module  # @dataclass looks its class's module up in sys.modules
    namespace = module.__dict__
    exec("import json, os, random, time\nfrom dataclasses import asdict, dataclass, replace\nfrom pathlib import Path\n"
         "from typing import Callable, List, Literal\nimport torch\nfrom tqdm.auto import tqdm\n"
         "from helpers import grpo, lm, profiles\nfrom helpers import math_tasks\n"
         f"PROFILE = {profile!r}\nSEED = 0\n", namespace)
    for grade_id in NOTEBOOK_CELLS:
        source = "\n".join(line for line in cells[grade_id].splitlines()
                           if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        exec(compile(source, f"{NOTEBOOK.name}:{grade_id}", "exec"), namespace)
    return namespace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="auto", choices=("auto", "tiny", "full"))
    parser.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step")
    parser.add_argument("--no-kl", action="store_true", help="skip Problem 15's reference pass (as the ablations do)")
    parser.add_argument("--rollout-batch-size", type=int, help="responses per step (also the train batch)")
    parser.add_argument("--max-tokens", type=int, help="sampling_max_tokens")
    parser.add_argument("--grad-accum", type=int, help="microbatches per optimizer step")
    args = parser.parse_args(argv)

    import torch

    from helpers import grpo, lm, profiles

    profile = profiles.get_profile(args.profile)
    if profile == "tiny":
        torch.set_num_threads(1)  # as the notebook does
    ns = notebook_namespace(profile)
    cfg = ns["GRPOConfig"](**ns["CFG"]["train"])
    overrides = dict(n_grpo_steps=args.steps + 1, eval_every=10**6, n_eval=1, eval_batch_size=1,
                     track_kl=not args.no_kl)
    if args.rollout_batch_size:
        overrides.update(rollout_batch_size=args.rollout_batch_size, train_batch_size=args.rollout_batch_size)
    if args.max_tokens:
        overrides.update(sampling_max_tokens=args.max_tokens)
    if args.grad_accum:
        overrides.update(gradient_accumulation_steps=args.grad_accum)
    from dataclasses import replace

    cfg = replace(cfg, **overrides)

    profiles.seed_everything(0)
    path = lm.resolve_model(profile, ns["MODEL_ID"])
    tokenizer = lm.load_tokenizer(path)
    model = lm.add_lora(lm.load_model(path, quantize_4bit=False), **ns["CFG"]["lora"])
    sampler = grpo.enable_fast_sampling(model, tokenizer)
    from helpers import math_tasks

    train_set = math_tasks.load_math("train", profile)
    val_set = math_tasks.load_math("validation", profile)[:1]

    calls = {"n": 0}
    original = grpo.sample_completions

    def counting(*a, **k):
        calls["n"] += 1
        return original(*a, **k)

    grpo.sample_completions = counting
    started = time.perf_counter()
    history = ns["grpo_train_loop"](model, tokenizer, train_set, val_set, cfg, reward_fn=ns["TRAIN_REWARD_FN"],
                                    log=lambda *_: None)
    total = time.perf_counter() - started
    grpo.sample_completions = original
    validations = len(history["val_step"])  # one generate call each (n_eval = 1)
    per_step_calls = (calls["n"] - validations) / cfg.n_grpo_steps

    timed = slice(1, None)  # drop the warm-up step (compilation, allocator)
    phases = {"generation": history["seconds_generate"][timed], "scoring": history["seconds_score"][timed],
              "backward": history["seconds_train"][timed]}
    medians = {name: statistics.median(values) for name, values in phases.items()}
    step = sum(medians.values())
    device = next(model.parameters()).device
    print(f"math_grpo step benchmark | profile={profile} device={device} | {sampler.describe()}")
    print(f"config: {cfg.rollout_batch_size} responses per step "
          f"({cfg.rollout_batch_size // cfg.group_size} questions x {cfg.group_size}), "
          f"max {cfg.sampling_max_tokens} new tokens, {cfg.gradient_accumulation_steps} microbatches, "
          f"KL pass {'on' if cfg.track_kl else 'off'}; {args.steps} timed steps after 1 warm-up")
    for name, value in medians.items():
        print(f"  {name:10s} {value:8.3f} s  ({value / step:5.1%})")
    print(f"  {'step':10s} {step:8.3f} s  | {cfg.rollout_batch_size / step:.1f} completions/s | "
          f"{per_step_calls:.1f} generate call(s) per optimizer step | whole run {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
