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
    """``tiny`` or ``full``: the profile the notebooks run in."""
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
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE_CELL))
    return path, notebook


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
    measured.wall_s = round(sum(measured.cells.values()), 1)
    measured.kernel = _kernel_info(notebook.cells[-1])
    _training(assignment, path.parent, measured)
    if assignment.evaluator is not None and measured.error is None:
        measured.evaluation = evaluate(assignment, path.parent / assignment.evaluator.artifact, settings.profile)
    return measured


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
    """The grader's own measurement of the reference's artifact, with its margin to each tier."""
    from autograder.evaluators import REGISTRY

    evaluator = importlib.import_module(REGISTRY[assignment.evaluator.name]).Evaluator(profile)
    found = evaluator.measure(artifact, assignment.adapters)
    tiers = dict(assignment.evaluator.tiers[profile])
    return {"rate": found.get("rate"), "hits": found.get("hits"), "total": found.get("total"),
            "error": found.get("error"), "tiers": tier_margins(found.get("rate"), tiers),
            "suggested_tiers": suggested_tiers(found.get("rate"), tiers)}


def tier_margins(rate: float | None, tiers: dict) -> dict:
    """grade_id -> {threshold, margin, reachable} (margin: the reference's rate minus the threshold)."""
    return {gid: {"threshold": t, "margin": None if rate is None else round(rate - t, 4),
                  "reachable": rate is not None and rate + 1e-12 >= t} for gid, t in tiers.items()}


SAFETY = 0.05
"""How far below the reference's own rate the top tier should sit: students' runs vary."""


def suggested_tiers(rate: float | None, tiers: dict) -> dict | None:
    """Thresholds in the same proportions, the top one SAFETY below the reference (5 % steps, rounded down);
    None when the current ones already leave that margin."""
    if rate is None or not tiers:
        return None
    top = max(tiers.values())
    if rate - top >= SAFETY - 1e-12:
        return None
    scale = max(rate - SAFETY, 0.0) / top
    return {gid: math.floor(t * scale / 0.05 + 1e-9) * 0.05 for gid, t in tiers.items()}


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
            "error": measured.error}


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
            lines.append(f"  the reference's own adherence: {evaluation['rate']:.1%}")
            for gid, tier in evaluation["tiers"].items():
                if not tier["reachable"]:
                    lines.append(f"  {gid}: the {tier['threshold']:.0%} tier is out of reach of the reference")
            if evaluation.get("suggested_tiers"):
                lines.append(f"  suggested evaluator.tiers.{record['profile']} for the manifest: "
                             + json.dumps(evaluation["suggested_tiers"]))
    return lines
