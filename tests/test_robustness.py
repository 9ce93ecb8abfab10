"""Every GRPO notebook's reference training, as a student's copy runs it, under several seeds.

A student's notebook has no hidden tests before training, so it consumes random numbers
differently from the solution notebook; a recipe that only works on one random stream fails
students. For each assignment whose ``autograder/samples/<id>.json`` has a ``robustness``
entry, the release filled with the reference answers is executed up to (and including) the
cell named by ``until``, with ``COURSE_SEED`` set; the training cell writes
``artifacts/<id>_metrics.json`` (``{"history": [per-step dicts], "final": {...}}``), and the
test checks that every logged loss and gradient norm is finite and that each target in
``checks`` holds (``{"final.heldout_exact": [">=", 0.2]}``).
"""
from __future__ import annotations

import json
import math
import os
import shutil

import nbformat
import pytest

from autograder.assignments import REPO_ROOT, load_assignments
from autograder.course import fill_release

SEEDS = (1, 2, 3)
ASSIGNMENTS = [a for a in load_assignments(REPO_ROOT) if a.samples.get("robustness")]
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}

pytestmark = pytest.mark.slow


def _lookup(data: dict, dotted: str):
    for key in dotted.split("."):
        data = data[key]
    return data


def _run_student_copy(assignment, folder, seed: int) -> dict:
    from nbclient import NotebookClient

    spec = assignment.samples["robustness"]
    release = REPO_ROOT / "notebooks" / assignment.id / f"{assignment.id}.ipynb"
    shutil.copytree(release.parent, folder)
    path = folder / release.name
    fill_release(release, assignment.source, path)
    notebook = nbformat.read(path, as_version=4)
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    assert spec["until"] in ids, f"robustness.until names no cell of {assignment.id}: {spec['until']}"
    notebook.cells = notebook.cells[: ids.index(spec["until"]) + 1]
    env = {**TINY_ENV, "COURSE_SEED": str(seed)}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        NotebookClient(notebook, timeout=900, kernel_name="python3",
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return json.loads((folder / spec["metrics"]).read_text())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_reference_training_is_finite_and_reaches_its_targets(assignment, seed, tmp_path):
    metrics = _run_student_copy(assignment, tmp_path / assignment.id, seed)
    history = metrics["history"]
    assert history, "the training cell logged no steps"
    for key in ("loss", "grad_norm"):
        values = [row[key] for row in history if key in row]
        assert values, f"the history has no {key!r}"
        assert all(math.isfinite(v) for v in values), f"non-finite {key} at steps " + str(
            [row.get("step") for row in history if not math.isfinite(row.get(key, 0.0))])
    largest_loss = max(abs(row["loss"]) for row in history)
    largest_grad = max(row["grad_norm"] for row in history)
    checks = assignment.samples["robustness"]["checks"]
    reached = {name: _lookup(metrics, name) for name in checks}
    print(f"\nrobustness {assignment.id} seed={seed}: {json.dumps(reached)} max|loss|={largest_loss:.4g} "
          f"max grad norm={largest_grad:.4g} steps={len(history)}")
    for name, (op, bound) in checks.items():
        assert OPS[op](reached[name], bound), f"{assignment.id} seed {seed}: {name} = {reached[name]} is not {op} {bound}"
