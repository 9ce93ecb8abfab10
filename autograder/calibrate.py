"""python -m autograder calibrate: each GPU assignment's reference recipe, measured on this machine.

The release filled with the reference answers runs as a student's copy runs it (up to the manifest's
``robustness.until`` cell, in the chosen profile), and the record says what it cost here: the device
and library versions, seconds per training step, minutes for the run, peak memory; for an
assignment graded by an evaluator (grpo_format's adherence tiers), the measurement the reference's
own artifact reaches and its margin to each tier, with thresholds to use where a tier is out of
reach. ``DIR/calibration.json`` holds the record, ``DIR/calibration.html`` shows it.
"""
from __future__ import annotations

import datetime
import importlib
import json
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.authoring.course import fill_release
from autograder.manifest import REPO_ROOT, Assignment

RECORD = "calibration.json"
PAGE = "calibration.html"
MARKER = "CALIBRATION "
# the last cell of every run: what the kernel itself knows (peak memory, device, versions), as one line
PROBE_CELL = f"""import json as _json, os as _os, platform as _platform, resource as _resource
_info = {{"python": _platform.python_version(), "cpus": _os.cpu_count(),
         "peak_rss_mb": _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024}}
for _name in ("torch", "transformers", "peft"):
    try:
        _info[_name] = __import__(_name).__version__
    except ImportError:
        pass
try:
    import torch as _torch
    if _torch.cuda.is_available():
        _info.update(device=_torch.cuda.get_device_name(0), peak_gpu_mb=_torch.cuda.max_memory_allocated() / 2**20)
except ImportError:
    pass
print({MARKER!r} + _json.dumps(_info))"""


@dataclass(frozen=True)
class CalibrationSettings:
    out: Path
    profile: str
    """``tiny``, ``small`` or ``full``: the profile the notebooks run in."""
    timeout_s: int = 7200
    """Per cell (a full-profile training cell runs for minutes)."""


@dataclass
class Measured:
    """One assignment's run."""
    assignment: str
    wall_s: float = 0.0
    train_s: float | None = None
    steps: int | None = None
    kernel: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    """grade_id (or "cell N") -> seconds."""
    evaluation: dict | None = None
    error: str | None = None
    printed: dict = field(default_factory=dict)
    """grade_id -> what the training cell and the cells after it printed (text only, shortened): the curves
    and the before/after numbers a notebook's prose may quote."""

    @property
    def seconds_per_step(self) -> float | None:
        return self.train_s / self.steps if self.train_s is not None and self.steps else None


def _seconds(cell) -> float:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = lambda text: datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def _student_copy(assignment: Assignment, folder: Path) -> tuple[Path, object]:
    """The release with the reference answers, cut after the training's last cell, plus the probe cell."""
    release = REPO_ROOT / "notebooks" / assignment.id / f"{assignment.id}.ipynb"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(release.parent, folder)
    path = folder / release.name
    fill_release(release, assignment.source, path)
    notebook = nbformat.read(path, as_version=4)
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    notebook.cells = notebook.cells[: ids.index(assignment.robustness.until) + 1]
    notebook.cells += [nbformat.v4.new_code_cell(task_cell(test)) for test in _task_tests(assignment)]
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE_CELL))
    return path, notebook


def _task_tests(assignment: Assignment) -> list:
    """Hidden tests whose grader-side evaluation runs on a task the notebook reports (tiny_grpo's own task)."""
    from autograder import hidden_test_files

    return [test for name, test in hidden_test_files.load(assignment.tests_dir).items()
            if test.evaluated_with and name in assignment.needs_real_weights]


def task_cell(test) -> str:
    """A cell that runs the hidden test's own probe on the reference's namespace and saves what it reports."""
    return (f"import json as _json, sys as _sys\n_sys.path.insert(0, {str(test.path.parent)!r})\n"
            f"from autograder.kernel.probe import Notebook as _Notebook\nimport {test.name} as _test\n_got = {{}}\n"
            f"_test.probe(_Notebook(globals()), lambda label, fn, *args: _got.setdefault(label, fn(*args)))\n"
            f"open({TASK_FILE.format(test.name)!r}, 'w').write(_json.dumps(_got))")


TASK_FILE = "calibration_task_{}.json"


def run_reference(assignment: Assignment, settings: CalibrationSettings, progress=None) -> Measured:
    """Run one assignment's reference recipe and measure it."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    measured = Measured(assignment.id)
    path, notebook = _student_copy(assignment, settings.out / "runs" / assignment.id)
    env = {**os.environ, "COURSE_PROFILE": settings.profile, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "MPLBACKEND": "Agg"}
    client = NotebookClient(notebook, timeout=settings.timeout_s, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            on_cell_executed=(lambda **_: progress.update(1)) if progress else None)
    try:
        client.execute(env=env)
    except CellExecutionError as error:
        measured.error = str(error).strip().splitlines()[-1][:300]
    nbformat.write(notebook, path)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            name = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {index}"
            measured.cells[name] = round(_seconds(cell), 2)
            if assignment.robustness.train_cell and name in _after(ids_of(notebook), assignment.robustness.train_cell):
                measured.printed[name] = _text(cell)
    measured.wall_s = round(sum(measured.cells.values()), 1)
    measured.kernel = _kernel_info(notebook.cells[-1])
    _training(assignment, path.parent, measured)
    if assignment.evaluator is not None and measured.error is None:
        measured.evaluation = evaluate(assignment, path.parent / assignment.evaluator.artifact, settings.profile)
    for test in _task_tests(assignment) if measured.error is None else []:
        measured.evaluation = evaluate_task(assignment, test, path.parent, settings.profile)
    return measured


def ids_of(notebook) -> list[str]:
    return [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {i}"
            for i, c in enumerate(notebook.cells)]


def _after(ids: list[str], first: str) -> list[str]:
    return ids[ids.index(first):] if first in ids else []


def _text(cell, limit: int = 4000) -> str:
    """A cell's printed text (streams and plain-text results), its last ``limit`` characters."""
    parts = [o.get("text", "") if o.get("output_type") == "stream" else o.get("data", {}).get("text/plain", "")
             for o in cell.get("outputs", [])]
    return "".join(parts)[-limit:]


def _kernel_info(cell) -> dict:
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER):])
    return {}


def _training(assignment: Assignment, folder: Path, measured: Measured) -> None:
    spec = assignment.robustness
    measured.train_s = measured.cells.get(spec.train_cell) if spec.train_cell else None
    try:
        history = json.loads((folder / spec.metrics).read_text())["history"]
        measured.steps = len(history) or None
    except (OSError, ValueError, KeyError, TypeError):
        measured.steps = None


def evaluate(assignment: Assignment, artifact: Path, profile: str) -> dict:
    """The grader's own measurement of the reference's artifact and of the base model alone (an untrained
    adapter, whose LoRA update is zero), with the reference's margin to each tier."""
    from autograder.evaluators import REGISTRY

    evaluator = importlib.import_module(REGISTRY[assignment.evaluator.name]).Evaluator(profile)
    found = evaluator.measure(artifact, assignment.adapters)
    base = evaluator.measure(untrained_adapter(assignment, artifact.parent / "untrained_adapter", profile),
                             assignment.adapters)
    tiers = dict(assignment.evaluator.tiers[profile])
    return {"rate": found.get("rate"), "hits": found.get("hits"), "total": found.get("total"),
            "base_rate": base.get("rate"), "error": found.get("error") or base.get("error"),
            "tiers": tier_margins(found.get("rate"), tiers, base.get("rate")),
            "suggested_tiers": suggested_tiers(found.get("rate"), tiers, base.get("rate")), **_model(profile)}


def untrained_adapter(assignment: Assignment, folder: Path, profile: str) -> Path:
    """A fresh LoRA adapter of the notebook's shape (rank 16 on the modules the manifest allows), saved as a
    student's would be: its update is zero, so it measures the base model through the same code path."""
    from helpers import lm

    model, _ = lm.load_policy(profile, evaluator_model_id(assignment),
                              lora=dict(r=16, alpha=32, dropout=0.0,
                                        target_modules=list(assignment.adapters.target_modules)))
    return lm.save_adapter(model, folder, profile=profile, steps=0)


def evaluator_model_id(assignment: Assignment) -> str:
    from autograder.evaluators import REGISTRY

    return importlib.import_module(REGISTRY[assignment.evaluator.name]).MODEL_ID


def evaluate_task(assignment: Assignment, test, folder: Path, profile: str) -> dict:
    """A task-evaluated test (greedy answers to the notebook's own held-out prompts): the grader's evaluator
    on the reference's adapter, base (adapter off) and fine-tuned, scored by the test's own rule."""
    from autograder.evaluators import REGISTRY

    module = test.module
    try:
        got = json.loads((folder / TASK_FILE.format(test.name)).read_text())
        inputs = module.evaluation_inputs(got)
    except (OSError, ValueError, KeyError) as error:
        return {"error": f"the reference's task could not be read ({type(error).__name__}: {error})"}
    evaluator = importlib.import_module(REGISTRY[module.EVALUATE_WITH]).Evaluator(profile)
    found = evaluator.measure(folder / module.ARTIFACT, assignment.adapters, **inputs)
    if found.get("error"):
        return {"error": found["error"], **_model(profile)}
    answers = got[module.ANSWERS]
    rate, base_rate = module.exact_share(answers, found["tuned"]), module.exact_share(answers, found["base"])
    gain = getattr(module, "MIN_GAIN", 0.10)
    return {"rate": rate, "base_rate": base_rate, "total": len(answers), "error": None, "test": test.name,
            "tiers": {test.name: {"threshold": round(base_rate + gain, 4), "margin": round(rate - base_rate - gain, 4),
                                  "reachable": rate + 1e-12 >= base_rate + gain}},
            "suggested_tiers": None, **_model(profile)}


def _model(profile: str) -> dict:
    """The base model the measurement ran on: its name and, in the small profile, the GGUF file's sha256."""
    if profile == "small":
        from helpers import small_model

        return {"model": small_model.SMALL_MODEL_ID, "gguf_sha256": small_model.GGUF_SHA256}
    return {"model": "the shipped tiny model" if profile == "tiny" else "the hub models of the full profile"}


def tier_margins(rate: float | None, tiers: dict, base_rate: float | None = None) -> dict:
    """grade_id -> {threshold, margin, reachable, base_margin} (margin: the reference's rate minus the
    threshold; base_margin: the threshold minus the base model's own rate, which must stay positive, or an
    untrained adapter earns the tier)."""
    return {gid: {"threshold": t, "margin": None if rate is None else round(rate - t, 4),
                  "reachable": rate is not None and rate + 1e-12 >= t,
                  "base_margin": None if base_rate is None else round(t - base_rate, 4)} for gid, t in tiers.items()}


SAFETY = 0.05
"""How far below the reference's own rate the top tier should sit: students' runs vary."""


def suggested_tiers(rate: float | None, tiers: dict, base_rate: float | None = None) -> dict | None:
    """Thresholds the record supports, in 5 % steps: the top one SAFETY below the reference, the lowest one
    SAFETY above the base model's own rate (an untrained adapter earns nothing), the others spread evenly
    between; None when the current ones already leave both margins (or no such spread exists)."""
    if rate is None or not tiers:
        return None
    low_ok = base_rate is None or min(tiers.values()) - base_rate >= SAFETY - 1e-12
    if rate - max(tiers.values()) >= SAFETY - 1e-12 and low_ok:
        return None
    top = math.floor((rate - SAFETY) / 0.05 + 1e-9) * 0.05
    bottom = 0.0 if base_rate is None else math.ceil((base_rate + SAFETY) / 0.05 - 1e-9) * 0.05
    ordered = sorted(tiers, key=tiers.get)
    if base_rate is None:  # no base measured: the same proportions under the new top
        scale = max(rate - SAFETY, 0.0) / max(tiers.values())
        return {gid: math.floor(t * scale / 0.05 + 1e-9) * 0.05 for gid, t in tiers.items()}
    if top < bottom:
        return None
    step = (top - bottom) / max(len(ordered) - 1, 1)
    return {gid: round(math.floor((bottom + i * step) / 0.05 + 1e-9) * 0.05, 2) for i, gid in enumerate(ordered)}


def calibrate(assignments: list[Assignment], settings: CalibrationSettings) -> dict:
    """Run every assignment, write the record and the page; returns the record."""
    from tqdm.auto import tqdm

    from autograder.reports.calibration_page import write_page

    settings.out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for assignment in assignments:
        cells = sum(1 for c in _student_copy(assignment, settings.out / "runs" / assignment.id)[1].cells
                    if c.cell_type == "code")
        with tqdm(total=cells, desc=f"{assignment.id} ({settings.profile})", unit="cell") as progress:
            runs[assignment.id] = run_reference(assignment, settings, progress)
    record = {"format": 1, "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
              "profile": settings.profile, "assignments": {name: _as_dict(m) for name, m in runs.items()}}
    (settings.out / RECORD).write_text(json.dumps(record, indent=1))
    write_page(record, settings.out / PAGE)
    return record


def _as_dict(measured: Measured) -> dict:
    return {"wall_s": measured.wall_s, "train_s": measured.train_s, "steps": measured.steps,
            "seconds_per_step": None if measured.seconds_per_step is None else round(measured.seconds_per_step, 3),
            "kernel": measured.kernel, "cells": measured.cells, "evaluation": measured.evaluation,
            "error": measured.error, "printed": {k: v for k, v in measured.printed.items() if v.strip()}}


def summary_lines(record: dict) -> list[str]:
    """What the command prints: one line per assignment, one per tier out of reach."""
    lines = []
    for name, run in record["assignments"].items():
        device = run["kernel"].get("device") or f"CPU ({run['kernel'].get('cpus', '?')} cores)"
        per_step = f"{run['seconds_per_step']:.2f} s/step over {run['steps']} steps" if run["seconds_per_step"] \
            else "no training steps timed"
        lines.append(f"{name}: {run['wall_s'] / 60:.1f} min on {device}, {per_step}"
                     + (f"; STOPPED: {run['error']}" if run["error"] else ""))
        evaluation = run.get("evaluation") or {}
        if evaluation.get("rate") is not None:
            base = evaluation.get("base_rate")
            lines.append(f"  the reference's own rate: {evaluation['rate']:.1%}"
                         + ("" if base is None else f" (the base model alone: {base:.1%})"))
            for gid, tier in evaluation["tiers"].items():
                if not tier["reachable"]:
                    lines.append(f"  {gid}: the {tier['threshold']:.0%} tier is out of reach of the reference")
            if evaluation.get("suggested_tiers"):
                lines.append(f"  suggested evaluator.tiers.{record['profile']} for the manifest: "
                             + json.dumps(evaluation["suggested_tiers"]))
    return lines
