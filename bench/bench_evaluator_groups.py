"""Seconds per grpo_format submission for the grader's adherence measurement, alone and in groups.

    .venv/bin/python bench/bench_evaluator_groups.py [--profile tiny|full] [--adapters 30] [--groups 1 4 8 16]
    .venv/bin/python bench/bench_evaluator_groups.py --autograde [--adapters 30]

The first form makes ``--adapters`` different LoRA adapters on the profile's base model (the
notebook's LoRA settings, each with its own noise on ``lora_B``, so their adherence differs), then
measures them with one ``autograder.evaluators.grpo_format.Evaluator`` in this process: one at a
time with one adapter's rows per decode (as before groups existed) and in groups of each size
(``measure_many``: peft's mixed-adapter batch; on a GPU every decode is padded to a full group's
rows, so "groups of 1" is what a submission measured alone costs now). It prints seconds per
adapter, the speed-up over one at a time, peak GPU memory on CUDA, and whether every group gave
each adapter the rate it got alone.

``--autograde`` grades that many submissions (the grpo_format reference notebook, each with its
own adapter) twice with ``python -m autograder autograde``'s code, one worker: with the adapters
measured ahead in groups (the default) and without, and prints seconds per submission for each.
Timings only: nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.evaluators.grpo_format import MODEL_ID  # noqa: E402


def make_adapters(folder: Path, count: int, profile: str) -> list[Path]:
    """``count`` adapters on the profile's base model, ``lora_B`` drawn with growing noise."""
    import torch

    from helpers import lm

    model, _ = lm.load_policy(profile, MODEL_ID, lora=dict(r=16, alpha=32, dropout=0.0))
    made = []
    for i in range(count):
        torch.manual_seed(i)
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0.0, 0.002 * (i % 10))
        made.append(lm.save_adapter(model, folder / f"adapter{i:03d}", profile=profile, steps=0))
    return made


def groups(args) -> int:
    import torch

    from autograder.evaluators.grpo_format import Evaluator

    with tempfile.TemporaryDirectory(prefix="bench-groups-") as scratch:
        adapters = make_adapters(Path(scratch), args.adapters, args.profile)
        evaluator = Evaluator(args.profile)
        device = next(evaluator.shared.model.parameters()).device
        print(f"{len(adapters)} adapters, profile {args.profile} ({evaluator.name}), {_where(device)}", flush=True)
        evaluator.measure(adapters[0])  # warm-up: kernels, allocator
        slots, evaluator.slots = evaluator.slots, 1  # the decode of one adapter's rows only, as before groups
        started = time.perf_counter()
        alone = [evaluator.measure(adapter)["rate"] for adapter in adapters]
        base = (time.perf_counter() - started) / len(adapters)
        evaluator.slots = slots
        print(f"one at a time, one adapter's rows per decode: {base:.2f} s per adapter; rates {min(alone):.0%} to "
              f"{max(alone):.0%}; below, every decode has {slots} adapters' rows at least", flush=True)
        for size in args.groups:
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats()
            started = time.perf_counter()
            rates = []
            for start in range(0, len(adapters), size):
                rates += [a["rate"] for a in evaluator.measure_many(adapters[start:start + size])]
            seconds = (time.perf_counter() - started) / len(adapters)
            memory = (f", peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB"
                      if device.type == "cuda" else "")
            same = sum(a == b for a, b in zip(alone, rates, strict=True))
            print(f"groups of {size:2d}: {seconds:.2f} s per adapter ({base / seconds:.1f}x){memory}; "
                  f"same rate as alone for {same}/{len(adapters)}", flush=True)
    return 0


def autograde_both(args) -> int:
    from autograder.grading import measure_ahead
    from autograder.grading.batch import Request, autograde
    from autograder.manifest import REPO_ROOT, load_assignments

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_autograde import reference_copies

    (assignment,) = load_assignments(REPO_ROOT, ["grpo_format"])
    with tempfile.TemporaryDirectory(prefix="bench-groups-") as scratch:
        scratch = Path(scratch)
        subs = reference_copies(assignment, scratch, args.adapters, args.profile)
        adapters = make_adapters(scratch / "adapters", args.adapters, args.profile)
        for student, adapter in zip(sorted(subs.iterdir()), adapters, strict=True):
            target = student / assignment.id / "artifacts" / "grpo_format_adapter"
            shutil.rmtree(target)
            shutil.copytree(adapter, target)
        request = Request(workers=1, profile=args.profile, feedback_pages=False)
        seconds = {}
        for label in ("measured ahead in groups", "each alone"):
            if label == "each alone":
                measure_ahead.measure_ahead = lambda runner, jobs, workers, log=None: 0
            started = time.perf_counter()
            results = autograde(subs, scratch / label.replace(" ", "_"), [assignment], request, log=_quiet)
            seconds[label] = (time.perf_counter() - started) / len(results)
            rates = sorted(r.measurements.get("grpo_format", {}).get("rate") or 0 for r in results)
            print(f"{label}: {seconds[label]:.1f} s per submission ({len(results)} submissions; rates "
                  f"{rates[0]:.0%} to {rates[-1]:.0%})", flush=True)
        print(f"ratio: {seconds['each alone'] / seconds['measured ahead in groups']:.2f}x")
    return 0


def _quiet(line: str) -> None:
    if "ahead" in line:
        print(line, flush=True)


def _where(device) -> str:
    import torch

    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}"
    return f"CPU, {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f}), {torch.get_num_threads()} threads"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="tiny", choices=["tiny", "full"])
    parser.add_argument("--adapters", type=int, default=30)
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--autograde", action="store_true", help="grade submissions with and without groups")
    args = parser.parse_args()
    return autograde_both(args) if args.autograde else groups(args)


if __name__ == "__main__":
    sys.exit(main())
