"""Expected values of the hidden tests: the reference solution's own observations.

``python -m autograder generate`` runs each solution notebook as the grader runs a submission (tiny
profile, ``NBGRADER_EXECUTION=autograde``, no artifacts) with :class:`ProbeExecute` recording
instead of judging: every hidden test's probe reports what the *reference* functions return on
the probe's inputs, and that is what a student's observations are compared with. The values go
to ``solutions/<id>/tests/expected.json`` (staff only: the release and the wheel never hold
``solutions/``), with a fingerprint of everything they were derived from: the solution notebook's
code, the hidden tests and the ``helpers`` package. ``generate --check`` fails when the
fingerprint is stale, as does ``tests/test_grpo_format.py::test_expected_values_are_current`` for one
assignment; ``tests/test_notebooks.py`` grades the reference against them.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import nbformat

from autograder.grading.job_settings import JOB_VARIABLE
from autograder.hidden_test_files import EXPECTED_FILE
from autograder.manifest import REPO_ROOT, Assignment

RECORDING_ENV = {"COURSE_PROFILE": "tiny", "NBGRADER_EXECUTION": "autograde", "HF_HUB_OFFLINE": "1",
                 "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg", "TOKENIZERS_PARALLELISM": "false",
                 "PYTHONWARNINGS": "ignore", "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


class RecordingError(RuntimeError):
    """The reference solution could not produce the expected values."""


def _helpers_files() -> list[Path]:
    root = REPO_ROOT / "helpers"
    generated = root / "data" / "grading.json"  # written from the manifests: no expected value reads it
    return sorted(p for p in root.rglob("*") if p.is_file() and p != generated and "__pycache__" not in p.parts)


def fingerprint(assignment: Assignment) -> str:
    """sha256 of what the expected values derive from (code cells, hidden tests, helpers)."""
    digest = hashlib.sha256()
    notebook = nbformat.read(assignment.source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            digest.update(b"cell\0" + cell.source.encode())
    for path in sorted(assignment.tests_dir.glob("*.py")):
        digest.update(f"tests/{path.name}".encode() + b"\0" + path.read_bytes())
    for path in _helpers_files():
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def stale(assignment: Assignment) -> str | None:
    """Why ``expected.json`` cannot be used as it is (None: it is current)."""
    path = assignment.tests_dir / EXPECTED_FILE
    if not path.exists():
        return f"{path} is missing"
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("fingerprint")
    except ValueError:
        return f"{path} is not valid JSON"
    if recorded != fingerprint(assignment):
        return f"{path} was recorded from other sources (the solution, its hidden tests or helpers changed)"
    return None


@contextmanager
def _environment(values: dict):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def record(assignment: Assignment, timeout: int | None = None) -> dict:
    """Run the solution notebook with every probe recording; {test name: observations}."""
    from autograder.grading.executor import ProbeExecute

    with tempfile.TemporaryDirectory(prefix=f"expected-{assignment.id}-") as scratch:
        work = Path(scratch) / assignment.id
        shutil.copytree(assignment.source.parent, work,
                        ignore=shutil.ignore_patterns("tests", "artifacts", "__pycache__", ".ipynb_checkpoints"))
        notebook = nbformat.read(work / assignment.source.name, as_version=4)
        executor = ProbeExecute(timeout=timeout or assignment.limits.cell_timeout_s, kernel_name="python3",
                                tests_dir=str(assignment.tests_dir), record=True, raise_on_iopub_timeout=False)
        with _environment({**RECORDING_ENV, JOB_VARIABLE: ""}):  # no grader's job: no deadline
            executor.preprocess(notebook, {"metadata": {"path": str(work)}})
    if executor.problems:
        raise RecordingError(f"{assignment.id}: " + "; ".join(executor.problems[:5]))
    for line in executor.notes:
        print(f"note: {assignment.id}: {line}", file=sys.stderr)
    return executor.recorded


def write(assignment: Assignment) -> Path:
    """Record the expected values and write ``tests/expected.json``."""
    import numpy
    import torch

    tests = record(assignment)
    names = sorted(p.stem for p in assignment.tests_dir.glob("test_*.py"))
    missing = [n for n in names if n not in tests and not _measured(assignment, n)]
    if missing:
        raise RecordingError(f"{assignment.id}: no test cell of the solution notebook ran {', '.join(missing)}")
    unfinished = [f"{test} ({label})" for test, observed in sorted(tests.items()) for label, value in observed.items()
                  if isinstance(value, dict) and value.get("error") == "NotImplementedError"]
    if unfinished:  # an expected error is fine (a ValueError on bad input); an unwritten reference never is
        raise RecordingError(f"{assignment.id}: the solution raised NotImplementedError in "
                             f"{', '.join(unfinished[:5])}; write the reference answer between "
                             "### BEGIN SOLUTION and ### END SOLUTION first")
    data = {"fingerprint": fingerprint(assignment),
            "recorded_with": {"python": platform.python_version(), "machine": platform.machine(),
                              "numpy": numpy.__version__, "torch": torch.__version__},
            "tests": tests}
    path = assignment.tests_dir / EXPECTED_FILE
    path.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    return path


def _measured(assignment: Assignment, name: str) -> bool:
    from autograder.hidden_test_files import load

    test = load(assignment.tests_dir).get(name)
    return test is not None and test.measured_by is not None
