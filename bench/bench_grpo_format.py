"""Throughput of one GRPO step: the grpo_format notebook's code against TRL's GRPOTrainer.

    python bench/bench_grpo_format.py [--steps 3] [--profile auto|tiny|full] [--skip-trl]

Both sides train the same model with the same LoRA and the same configuration (the notebook's
CONFIGS[profile]: prompts x group size x gradient accumulation, max new tokens, lr, beta,
epsilon, temperature) and the same format reward. Each side runs one warm-up step and then
``--steps`` timed steps; the script prints completions per second for each and their ratio
(notebook / TRL; above 1 means the notebook's step is faster).

The notebook's code is read from solutions/grpo_format/grpo_format.ipynb (the reference
solution), so the benchmark follows the notebook instead of keeping a second copy of it.
On a CUDA machine the profile is ``full`` (Qwen2.5-0.5B-Instruct in 4-bit NF4 + LoRA); on a
CPU it is ``tiny``. TRL is not a dependency of the kit: without it only the notebook's side
runs and the script says so.

The two are not the same algorithm in every detail: TRL scores tokens (token-level ratio
and KL, its ``loss_type``), the notebook whole sequences; the work per step (generation,
policy and reference forward passes, backward) is the same, and that is what is timed.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "solutions" / "grpo_format" / "grpo_format.ipynb"
NOTEBOOK_CELLS = ("config", "format_reward", "group_advantages", "grpo_loss", "grpo_update")


def notebook_namespace(profile: str) -> dict:
    """Execute the notebook's configuration and solution cells (markers stripped) in a dict."""
    import nbformat
    import torch

    from helpers import grpo, lm

    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells}
    namespace = {"__name__": "grpo_format_notebook", "PROFILE": profile, "torch": torch, "grpo": grpo, "lm": lm}
    exec("import math, random, re, time\nfrom dataclasses import dataclass, asdict\nfrom pathlib import Path\n"
         "from helpers import env", namespace)
    for grade_id in NOTEBOOK_CELLS:
        source = "\n".join(line for line in cells[grade_id].splitlines()
                           if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        exec(compile(source, f"{NOTEBOOK.name}:{grade_id}", "exec"), namespace)
    return namespace


def questions(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [f"If you add {rng.randint(10, 99)} and {rng.randint(1, 9)}, what is the result?" for _ in range(n)]


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def bench_notebook(ns: dict, profile: str, steps: int) -> tuple[float, int]:
    """Median seconds per step and completions per step with the notebook's grpo_update."""
    import torch

    from helpers import env, lm

    cfg = ns["CFG"]
    env.seed_everything(0)
    model, tokenizer = lm.load_policy(profile, ns["MODEL_NAME"], lora=dict(r=16, alpha=32, dropout=0.05))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    system = lm.THINK_ANSWER_SYSTEM_PROMPT
    prompts = [tokenizer.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": q}],
                                             tokenize=False, add_generation_prompt=True)
               for q in questions(cfg.prompts_per_step * (steps + 1))]
    times = []
    for step in range(steps + 1):   # step 0 warms up kernels and allocators
        batch = prompts[step * cfg.prompts_per_step:(step + 1) * cfg.prompts_per_step]
        sync()
        started = time.perf_counter()
        metrics = ns["grpo_update"](model, tokenizer, optimizer, batch, cfg)
        sync()
        times.append(time.perf_counter() - started)
        print(f"  notebook step {step}: {times[-1]:.2f} s, reward {metrics['reward_mean']:.2f}, "
              f"length {metrics['completion_length']:.0f}", flush=True)
    del model, optimizer
    return statistics.median(times[1:]), cfg.prompts_per_step * cfg.group_size * cfg.grad_accum


def bench_trl(ns: dict, profile: str, steps: int) -> tuple[float, int] | None:
    """Median seconds per step and completions per step with TRL's GRPOTrainer, or None."""
    try:
        import trl
        from trl import GRPOConfig as TRLConfig, GRPOTrainer
    except ImportError:
        print("  TRL is not installed (pip install trl): skipping the TRL side")
        return None
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback

    from helpers import lm

    cfg = ns["CFG"]
    format_reward = ns["format_reward"]
    name = lm.resolve_model(profile, ns["MODEL_NAME"])
    tokenizer = lm.load_tokenizer(name)
    model = lm.load_model(name)
    system = lm.THINK_ANSWER_SYSTEM_PROMPT
    per_step = cfg.prompts_per_step * cfg.group_size * cfg.grad_accum
    rows = [{"prompt": [{"role": "system", "content": system}, {"role": "user", "content": q}]}
            for q in questions(cfg.prompts_per_step * cfg.grad_accum * (steps + 1), seed=1)]

    def reward(completions, **kwargs):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return format_reward(texts).tolist()

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times, self._start = [], None

        def on_step_begin(self, args, state, control, **kwargs):
            sync()
            self._start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            sync()
            self.times.append(time.perf_counter() - self._start)
            print(f"  TRL step {len(self.times) - 1}: {self.times[-1]:.2f} s", flush=True)

    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    args = TRLConfig(
        output_dir=str(Path(os.environ.get("TMPDIR", "/tmp")) / "bench_grpo_format_trl"),
        per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,   # TRL counts completions
        gradient_accumulation_steps=cfg.grad_accum,
        num_generations=cfg.group_size,
        max_completion_length=cfg.max_new_tokens,
        learning_rate=cfg.lr,
        beta=cfg.beta,
        epsilon=cfg.epsilon,
        temperature=cfg.temperature,
        max_grad_norm=cfg.max_grad_norm,
        max_steps=steps + 1,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        bf16=bf16,
        use_cpu=not torch.cuda.is_available(),
        seed=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer,
                          peft_config=LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM"))
    timer = StepTimer()
    trainer.add_callback(timer)
    print(f"  TRL {trl.__version__}")
    trainer.train()
    return statistics.median(timer.times[1:]), per_step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="timed steps per side (after one warm-up step)")
    parser.add_argument("--profile", default="auto", choices=["auto", "tiny", "full"])
    parser.add_argument("--skip-trl", action="store_true")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    import torch

    from helpers import env

    profile = env.get_profile(args.profile)
    if profile == "tiny":
        env.set_offline(True)
    ns = notebook_namespace(profile)
    cfg = ns["CFG"]
    print(f"profile {profile} | {env.describe(profile)} | torch threads {torch.get_num_threads()}")
    print(f"config: {cfg.prompts_per_step} prompts x group {cfg.group_size} x accumulation {cfg.grad_accum}, "
          f"{cfg.max_new_tokens} new tokens, lr {cfg.lr}, beta {cfg.beta}, epsilon {cfg.epsilon}")
    ours = bench_notebook(ns, profile, args.steps)
    print(f"notebook: {ours[0]:.2f} s per step, {ours[1] / ours[0]:.1f} completions/s")
    theirs = None if args.skip_trl else bench_trl(ns, profile, args.steps)
    if theirs is not None:
        print(f"TRL:      {theirs[0]:.2f} s per step, {theirs[1] / theirs[0]:.1f} completions/s")
        print(f"throughput ratio notebook / TRL = {(ours[1] / ours[0]) / (theirs[1] / theirs[0]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
