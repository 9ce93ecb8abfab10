"""Throughput of one GRPO step: the grpo_format notebook's code against TRL's GRPOTrainer.

    python bench/bench_grpo_format.py [--profile auto|tiny|small|full] [--steps 3] [--grad-accum N] [--skip-trl]

Both sides train the same model with the same LoRA and the same configuration (the notebook's
CONFIGS[profile]: prompts per step x group size, micro-batches, max new tokens, lr, beta,
epsilon, temperature) and the same format reward. Each side runs one warm-up step (it pays for
compilation and allocator growth) and then ``--steps`` timed steps. The script prints, in one
run: seconds per optimizer step, completions per second, ``generate`` calls per optimizer step
(every call of ``transformers``' ``generate``, on the policy or on the fast sampler's inference
copy, is counted), and the throughput ratio notebook / TRL (above 1: the notebook is faster).

``--grad-accum N`` overrides the configuration's number of micro-batches (it must divide the
prompts per step); the rollout stays one ``generate`` call per step whatever N is, and TRL gets
the same split (``per_device_train_batch_size`` completions x ``gradient_accumulation_steps``).

The notebook's code is read from solutions/grpo_format/grpo_format.ipynb (the reference
solution): the configuration cell, the four answer cells, and the model cell's call of
``grpo.enable_fast_sampling``. They are executed in a real module object registered in
``sys.modules`` (``@dataclass`` looks its class's module up there and fails in a bare dict on
Python 3.11+). The configuration cell's artifacts folder is redirected to a temporary folder.
On a CUDA machine the profile is ``full`` (Qwen2.5-0.5B-Instruct in 4-bit NF4 + LoRA, offline:
the weights must be in the local hub cache); on a CPU it is ``tiny``, or ``small`` when asked for
(SmolLM2-135M-Instruct, real weights, with the profile's worked examples in every prompt). TRL is not a dependency of
the kit: without it only the notebook's side runs and the script says so.

The two sides are not the same algorithm in every detail: TRL scores tokens (token-level
ratio against the sampling policy, its ``loss_type``), the notebook whole sequences against the
reference; the work per step (sampling, policy and reference forward passes, backward) is the
same, and that is what is timed.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "solutions" / "grpo_format" / "grpo_format.ipynb"
NOTEBOOK_CELLS = ("config", "format_reward", "group_advantages", "grpo_loss", "grpo_update")
MODULE_NAME = "grpo_format_notebook"


def notebook_module(profile: str) -> types.ModuleType:
    """The notebook's configuration and solution cells (markers stripped), run in a real module."""
    import nbformat
    import torch

    from helpers import grpo, lm, profiles, runtime

    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
             for c in nbformat.read(NOTEBOOK, as_version=4).cells}
    missing = [grade_id for grade_id in NOTEBOOK_CELLS if grade_id not in cells]
    if missing:
        raise SystemExit(f"{NOTEBOOK} has no cells {missing}: update NOTEBOOK_CELLS in {Path(__file__).name}")
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = str(NOTEBOOK)
    sys.modules[MODULE_NAME] = module   # @dataclass reads sys.modules[cls.__module__]
    namespace = module.__dict__
    namespace.update(PROFILE=profile, AUTOGRADING=False, torch=torch, grpo=grpo, lm=lm, profiles=profiles,
                     runtime=runtime)
    exec("import json, math, random, re, time\nfrom dataclasses import dataclass, asdict\nfrom pathlib import Path",
         namespace)
    os.environ.setdefault(runtime.ARTIFACTS_VARIABLE, tempfile.mkdtemp(prefix="bench-grpo-format-"))
    for grade_id in NOTEBOOK_CELLS:
        source = "\n".join(line for line in cells[grade_id].splitlines()
                           if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        exec(compile(source, f"{NOTEBOOK.name}:{grade_id}", "exec"), namespace)
    return module


def questions(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [f"If you add {rng.randint(10, 99)} and {rng.randint(1, 9)}, what is the result?" for _ in range(n)]


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


class GenerateCounter:
    """Counts calls of transformers' ``generate`` (policy, peft wrapper or inference copy alike)."""

    def __init__(self):
        from transformers.generation.utils import GenerationMixin

        self.calls = 0
        self._mixin, self._original = GenerationMixin, GenerationMixin.generate
        counter = self

        def counted(model, *args, **kwargs):
            counter.calls += 1
            return counter._original(model, *args, **kwargs)

        GenerationMixin.generate = counted

    def close(self) -> None:
        self._mixin.generate = self._original


@dataclasses.dataclass
class Result:
    seconds_per_step: float
    completions_per_step: int
    generate_calls_per_step: float | None

    @property
    def completions_per_second(self) -> float:
        return self.completions_per_step / self.seconds_per_step


def bench_notebook(nb: types.ModuleType, cfg, profile: str, steps: int) -> Result:
    """Median seconds per optimizer step with the notebook's grpo_update, and its generate calls."""
    import torch

    from helpers import grpo, lm, profiles

    profiles.seed_everything(0)
    model, tokenizer = lm.load_policy(profile, nb.MODEL_NAME, lora=dict(r=16, alpha=32, dropout=0.05))
    print("  " + grpo.enable_fast_sampling(model, tokenizer).describe())   # as the notebook's model cell does
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    prompts = [tokenizer.apply_chat_template(lm.think_answer_messages(q, profile), tokenize=False,
                                             add_generation_prompt=True)
               for q in questions(cfg.prompts_per_step * (steps + 1))]
    counter = GenerateCounter()
    times, calls = [], []
    try:
        for step in range(steps + 1):   # step 0 warms up kernels, compilation and allocators
            batch = prompts[step * cfg.prompts_per_step:(step + 1) * cfg.prompts_per_step]
            before = counter.calls
            sync()
            started = time.perf_counter()
            with grpo.at_step(step):
                metrics = nb.grpo_update(model, tokenizer, optimizer, batch, cfg)
            sync()
            times.append(time.perf_counter() - started)
            calls.append(counter.calls - before)
            print(f"  notebook step {step}{' (warm-up)' if step == 0 else ''}: {times[-1]:.2f} s, "
                  f"{calls[-1]} generate call(s), reward {metrics['reward_mean']:.2f}, "
                  f"length {metrics['completion_length']:.0f}", flush=True)
    finally:
        counter.close()
    del model, optimizer
    return Result(statistics.median(times[1:]), cfg.prompts_per_step * cfg.group_size,
                  statistics.mean(calls[1:]))


def bench_trl(nb: types.ModuleType, cfg, profile: str, steps: int) -> Result | None:
    """Median seconds per optimizer step with TRL's GRPOTrainer on the same configuration, or None."""
    try:
        import trl
        from trl import GRPOConfig as TRLConfig
        from trl import GRPOTrainer
    except ImportError:
        print("  TRL is not installed (pip install trl): skipping the TRL side")
        return None
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback

    from helpers import lm

    name = lm.resolve_model(profile, nb.MODEL_NAME)
    tokenizer = lm.load_tokenizer(name)
    model = lm.load_model(name)
    per_step = cfg.prompts_per_step * cfg.group_size
    rows = [{"prompt": lm.think_answer_messages(q, profile)}
            for q in questions(cfg.prompts_per_step * (steps + 1), seed=1)]

    def reward(completions, **kwargs):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return nb.format_reward(texts).tolist()

    counter = GenerateCounter()

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times, self.calls, self._start, self._calls = [], [], None, 0

        def on_step_begin(self, args, state, control, **kwargs):
            sync()
            self._start, self._calls = time.perf_counter(), counter.calls

        def on_step_end(self, args, state, control, **kwargs):
            sync()
            self.times.append(time.perf_counter() - self._start)
            self.calls.append(counter.calls - self._calls)
            print(f"  TRL step {len(self.times) - 1}: {self.times[-1]:.2f} s, {self.calls[-1]} generate call(s)",
                  flush=True)

    half = torch.cuda.is_available()
    bf16 = half and lm.compute_dtype() == torch.bfloat16
    args = TRLConfig(
        output_dir=str(Path(tempfile.gettempdir()) / "bench_grpo_format_trl"),
        per_device_train_batch_size=per_step // cfg.grad_accum,   # TRL counts completions
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
        fp16=half and not bf16,
        use_cpu=not torch.cuda.is_available(),
        seed=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer,
                          peft_config=LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM"))
    timer = StepTimer()
    trainer.add_callback(timer)
    print(f"  TRL {trl.__version__}")
    try:
        trainer.train()
    finally:
        counter.close()
    return Result(statistics.median(timer.times[1:]), per_step, statistics.mean(timer.calls[1:]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="timed steps per side (after one warm-up step)")
    parser.add_argument("--profile", default="auto", choices=["auto", "tiny", "small", "full"])
    parser.add_argument("--grad-accum", type=int, default=None,
                        help="micro-batches per optimizer step (default: the notebook's configuration)")
    parser.add_argument("--skip-trl", action="store_true", help="time the notebook's step only")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")

    sys.path.insert(0, str(REPO))
    import torch

    from helpers import profiles

    os.environ[profiles.PROFILE_VARIABLE] = args.profile   # the notebook's cells read the profile from here
    profile = profiles.get_profile(args.profile)
    if profile == "tiny":
        profiles.set_offline(True)
        torch.set_num_threads(1)   # as the notebook does for the tiny model
    nb = notebook_module(profile)
    cfg = nb.CONFIGS[profile]
    if args.grad_accum is not None:
        try:
            cfg = dataclasses.replace(cfg, grad_accum=args.grad_accum)
        except ValueError as error:
            parser.error(f"--grad-accum {args.grad_accum}: {error}")
    print(f"profile {profile} | {profiles.describe(profile)} | torch threads {torch.get_num_threads()}")
    print(f"config: {cfg.prompts_per_step} prompts x group {cfg.group_size} = "
          f"{cfg.prompts_per_step * cfg.group_size} completions per step in {cfg.grad_accum} micro-batch(es), "
          f"{cfg.max_new_tokens} new tokens, lr {cfg.lr}, beta {cfg.beta}, epsilon {cfg.epsilon}")
    ours = bench_notebook(nb, cfg, profile, args.steps)
    theirs = None if args.skip_trl else bench_trl(nb, cfg, profile, args.steps)
    print()
    print(f"notebook: {ours.seconds_per_step:.2f} s per step, {ours.completions_per_second:.1f} completions/s, "
          f"{ours.generate_calls_per_step:g} generate call(s) per optimizer step")
    if theirs is not None:
        print(f"TRL:      {theirs.seconds_per_step:.2f} s per step, {theirs.completions_per_second:.1f} completions/s, "
              f"{theirs.generate_calls_per_step:g} generate call(s) per optimizer step")
        print(f"throughput ratio notebook / TRL = {ours.completions_per_second / theirs.completions_per_second:.2f}")
    elif not args.skip_trl:
        print("TRL: not run (not installed), so no ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
