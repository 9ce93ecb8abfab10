"""Every GRPO notebook's reference training, as a student's copy runs it, under several seeds.

A student's notebook has no hidden tests before training, so it consumes random numbers
differently from the solution notebook; a recipe that only works on one random stream fails
students. For each assignment whose ``solutions/<id>/manifest.json`` has a ``robustness``
entry, the release filled with the reference answers is executed up to (and including) the
cell named by ``until``, with ``COURSE_SEED`` set; the training cell writes
``artifacts/<id>_metrics.json`` (``{"history": [per-step dicts], "final": {...}}``), and the
test checks that every logged loss and gradient norm is finite and that each target in
``checks`` holds (``{"final.heldout_exact": [">=", 0.2]}``).

The seeds of one assignment run two at a time (one kernel each, one thread each: the tiny
models are fastest on one thread). These tests carry the ``robustness`` marker and are not
part of ``make test``; ``make test-robustness`` runs them, and CI runs it after the suite.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from autograder.authoring.course import fill_release
from autograder.manifest import REPO_ROOT, load_assignments

SEEDS = (1, 2, 3)
PARALLEL = int(os.environ.get("COURSE_ROBUSTNESS_WORKERS", "2"))
ASSIGNMENTS = [a for a in load_assignments(REPO_ROOT) if a.robustness]
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}

pytestmark = [pytest.mark.slow, pytest.mark.robustness]


def _lookup(data: dict, dotted: str):
    for key in dotted.split("."):
        data = data[key]
    return data


def _run_student_copy(assignment, folder, seed: int) -> dict:
    from nbclient import NotebookClient

    spec = assignment.robustness
    release = REPO_ROOT / "notebooks" / assignment.id / f"{assignment.id}.ipynb"
    shutil.copytree(release.parent, folder)
    path = folder / release.name
    fill_release(release, assignment.source, path)
    notebook = nbformat.read(path, as_version=4)
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    assert spec.until in ids, f"robustness.until names no cell of {assignment.id}: {spec.until}"
    notebook.cells = notebook.cells[: ids.index(spec.until) + 1]
    # The kernel gets its own environment (os.environ is shared by the threads running seeds).
    env = {**os.environ, **TINY_ENV, "COURSE_SEED": str(seed)}
    NotebookClient(notebook, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute(env=env)
    return json.loads((folder / spec.metrics).read_text())


def _check(assignment, seed: int, metrics: dict) -> list[str]:
    """Problems with one seed's run (empty: it is finite and reached every target)."""
    history = metrics["history"]
    if not history:
        return [f"seed {seed}: the training cell logged no steps"]
    problems = []
    for key in ("loss", "grad_norm"):
        values = [row[key] for row in history if key in row]
        if not values:
            problems.append(f"seed {seed}: the history has no {key!r}")
        bad = [row.get("step") for row in history if key in row and not math.isfinite(row[key])]
        if bad:
            problems.append(f"seed {seed}: non-finite {key} at steps {bad}")
    checks = assignment.robustness.checks
    reached = {name: _lookup(metrics, name) for name in checks}
    largest_loss = max(abs(row["loss"]) for row in history)
    largest_grad = max(row["grad_norm"] for row in history)
    print(f"\nrobustness {assignment.id} seed={seed}: {json.dumps(reached)} max|loss|={largest_loss:.4g} "
          f"max grad norm={largest_grad:.4g} steps={len(history)}")
    for name, (op, bound) in checks.items():
        if not OPS[op](reached[name], bound):
            problems.append(f"seed {seed}: {name} = {reached[name]} is not {op} {bound}")
    return problems


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_reference_training_is_finite_and_reaches_its_targets(assignment, tmp_path):
    assert assignment.robustness.checks, f"{assignment.id}: robustness.checks names no target"
    with ThreadPoolExecutor(max_workers=max(1, PARALLEL)) as pool:
        runs = {seed: pool.submit(_run_student_copy, assignment, tmp_path / f"seed{seed}" / assignment.id, seed)
                for seed in SEEDS}
        metrics = {seed: run.result() for seed, run in runs.items()}
    problems = [line for seed in SEEDS for line in _check(assignment, seed, metrics[seed])]
    assert not problems, f"{assignment.id}: " + "; ".join(problems)
