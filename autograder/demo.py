"""The main job, end to end: release, sample submissions, autograde in the tiny profile, table."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from .assignments import Assignment
from .course import fill_release, new_course
from .batch import autograde
from .results import Result

SAMPLE_STUDENTS = ("reference", "blank", "buggy")


def execute_notebook(path: Path, timeout: int, env: dict) -> None:
    """Run a notebook top to bottom in its own folder (so its artifacts land beside it)."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    nbformat.write(notebook, path)


def build_samples(assignments: list[Assignment], course: Path, submissions: Path, env: dict,
                  log=print, execute_all: bool = False) -> dict[str, float]:
    """reference = solutions as a student would submit them (with artifacts), blank = the
    untouched release, buggy = the reference with one plausible mistake (same artifacts).

    The reference is executed when it must produce artifacts, or for every assignment with
    ``execute_all`` (the tests use that to run each solution top to bottom). Returns the seconds
    each executed reference took."""
    timings = {}
    for assignment in assignments:
        release_dir = course / "release" / assignment.id
        release = release_dir / f"{assignment.id}.ipynb"
        reference_dir = submissions / "reference" / assignment.id
        shutil.copytree(release_dir, reference_dir)
        fill_release(release, assignment.source, reference_dir / f"{assignment.id}.ipynb")
        if assignment.artifacts or execute_all:
            started = time.perf_counter()
            produces = f" to produce {', '.join(assignment.artifacts)}" if assignment.artifacts else ""
            log(f"  {assignment.id}: running the reference solution{produces} ...")
            execute_notebook(reference_dir / f"{assignment.id}.ipynb", timeout=max(assignment.timeout, 600), env=env)
            timings[assignment.id] = time.perf_counter() - started
            log(f"  {assignment.id}: reference run took {timings[assignment.id]:.0f} s")
        shutil.copytree(release_dir, submissions / "blank" / assignment.id)
        buggy = assignment.samples.get("buggy")
        if buggy:
            buggy_dir = submissions / "buggy" / assignment.id
            shutil.copytree(reference_dir, buggy_dir)
            fill_release(release, assignment.source, buggy_dir / f"{assignment.id}.ipynb", patches=buggy["patches"])
    return timings


def expected_score(assignment: Assignment, student: str):
    return assignment.samples.get("expected", {}).get(student)


def demo(assignments: list[Assignment], out: Path, workers: int = 1, log=print) -> tuple[list[Result], list[str]]:
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
    submissions = out / "submissions"
    log(f"generating releases for {', '.join(a.id for a in assignments)} ...")
    with tempfile.TemporaryDirectory(prefix="demo-") as scratch:
        course = new_course(assignments, where=Path(scratch))
        log("building sample submissions (reference, blank, buggy) ...")
        build_samples(assignments, course, submissions, env, log)
    log("autograding in the tiny profile ...")
    results = autograde(submissions, out, assignments, workers=workers, profile="tiny")
    by_id = {a.id: a for a in assignments}
    surprises = []
    for r in results:
        want = expected_score(by_id[r.assignment], r.student)
        if want is not None and abs(r.score - float(want)) > 1e-9:
            surprises.append(f"{r.student}/{r.assignment}: scored {r.score:g}, expected {want}")
    return results, surprises


def demo_table(results: list[Result], assignments: list[Assignment]) -> str:
    by_id = {a.id: a for a in assignments}
    header = ("assignment", "student", "score", "expected", "status", "seconds")
    rows = [header]
    order = {a.id: i for i, a in enumerate(assignments)}
    rank = {name: i for i, name in enumerate(SAMPLE_STUDENTS)}
    for r in sorted(results, key=lambda r: (order.get(r.assignment, 99), rank.get(r.student, 99), r.student)):
        want = expected_score(by_id[r.assignment], r.student)
        rows.append((r.assignment, r.student, f"{r.score:g} / {r.max_score:g}",
                     "" if want is None else f"{float(want):g}", r.status, f"{r.seconds:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
