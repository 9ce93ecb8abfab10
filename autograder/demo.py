"""The main job, end to end: release, sample submissions, autograde in the tiny profile, table."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import nbformat

from autograder.authoring.course import fill_release, new_course
from autograder.grading.batch import Request, autograde
from autograder.grading.kernel_env import thread_env, threads_per_job
from autograder.manifest import REPO_ROOT, Assignment
from autograder.outcome import Result

SAMPLE_STUDENTS = ("reference", "blank", "buggy")
DEMO_MANIFEST = "demo_run.json"


def execute_notebook(path: Path, timeout: int, env: dict) -> None:
    """Run a notebook top to bottom in its own folder (so its artifacts land beside it).

    ``env`` is added to this process's environment for the kernel alone (nothing here changes
    ``os.environ``, so several notebooks can run at once from threads)."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(env={**os.environ, **env})
    nbformat.write(notebook, path)


def reference_jobs() -> int:
    """How many reference notebooks run at once: the tiny-profile notebooks use one thread each
    (``torch.set_num_threads(1)``), so one per core; ``COURSE_KIT_JOBS`` overrides it."""
    return max(1, int(os.environ.get("COURSE_KIT_JOBS") or os.cpu_count() or 1))


def build_samples(assignments: list[Assignment], course: Path, submissions: Path, env: dict,
                  log=print, execute_all: bool = False) -> dict[str, float]:
    """reference = solutions as a student would submit them (with artifacts), blank = the
    untouched release, buggy = the reference with one plausible mistake (same artifacts).

    The reference is executed when it must produce artifacts, or for every assignment with
    ``execute_all`` (the tests use that to run each solution top to bottom), up to
    :func:`reference_jobs` at once. Returns the seconds each executed reference took."""
    timings = {}
    for assignment, seconds in _samples_as_ready(assignments, (course, submissions), env, log, execute_all):
        if seconds is not None:
            timings[assignment.id] = seconds
    return timings


def _samples_as_ready(assignments, where: tuple[Path, Path], env, log, execute_all, idle=None):
    """Yield ``(assignment, reference seconds or None)`` as each assignment's samples are complete;
    ``where`` is (the course holding the releases, the submissions folder).

    ``idle``, if given, is called between completions while references still run and fewer of
    them than :func:`reference_jobs` are running (a core is free); it returns once it has done
    something with that core, or at once if it has nothing to do."""
    course, submissions = where
    for assignment in assignments:
        release_dir = course / "release" / assignment.id
        reference_dir = submissions / "reference" / assignment.id
        shutil.copytree(release_dir, reference_dir)
        fill_release(release_dir / f"{assignment.id}.ipynb", assignment.source,
                     reference_dir / f"{assignment.id}.ipynb")
    # longest first (code cells stand in for run time), so the short ones fill the other cores
    to_run = sorted((a for a in assignments if a.artifacts or execute_all), key=_code_cells, reverse=True)
    for assignment in assignments:
        if assignment not in to_run:
            _finish_samples(assignment, course, submissions)
            yield assignment, None
    jobs = min(reference_jobs(), len(to_run))
    env = {**thread_env(threads_per_job(jobs)), **env}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running = {pool.submit(_run_reference, a, submissions, env, log): a for a in to_run}
        while running:
            done, _ = wait(running, timeout=None if idle is None else 1.0, return_when=FIRST_COMPLETED)
            for future in done:
                assignment = running.pop(future)
                _, seconds = future.result()
                _finish_samples(assignment, course, submissions)  # buggy copies the reference's artifacts
                yield assignment, seconds
            if idle is not None and running and len(running) < jobs:
                idle()


def _finish_samples(assignment: Assignment, course: Path, submissions: Path) -> None:
    """blank and buggy, once the reference (and its artifacts) exists."""
    release_dir = course / "release" / assignment.id
    shutil.copytree(release_dir, submissions / "blank" / assignment.id)
    if assignment.demo.buggy_patches:
        buggy_dir = submissions / "buggy" / assignment.id
        shutil.copytree(submissions / "reference" / assignment.id, buggy_dir)
        fill_release(release_dir / f"{assignment.id}.ipynb", assignment.source,
                     buggy_dir / f"{assignment.id}.ipynb", patches=assignment.demo.buggy_patches)


def _code_cells(assignment: Assignment) -> int:
    return sum(cell.cell_type == "code" for cell in nbformat.read(assignment.source, as_version=4).cells)


def _run_reference(assignment: Assignment, submissions: Path, env: dict, log) -> tuple[str, float]:
    started = time.perf_counter()
    produces = f" to produce {', '.join(assignment.artifacts)}" if assignment.artifacts else ""
    log(f"  {assignment.id}: running the reference solution{produces} ...")
    notebook = submissions / "reference" / assignment.id / f"{assignment.id}.ipynb"
    execute_notebook(notebook, timeout=max(assignment.limits.cell_timeout_s, 600), env=env)
    seconds = time.perf_counter() - started
    log(f"  {assignment.id}: reference run took {seconds:.0f} s")
    return assignment.id, seconds


def sources_digest(root: Path = REPO_ROOT) -> str:
    """sha256 over every file that decides what the references and their grades are (solutions,
    manifests, helpers, autograder): a saved demo run is reusable only while it matches."""
    digest = hashlib.sha256()
    for folder in ("solutions", "helpers", "autograder"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def write_run_manifest(out: Path, assignments: list[Assignment], timings: dict[str, float]) -> None:
    """``OUT/demo_run.json``: what this demo executed and graded, for ``make test`` to reuse
    (``COURSE_KIT_DEMO_OUTPUT``; see tests/conftest.py)."""
    (out / DEMO_MANIFEST).write_text(json.dumps({
        "sources": sources_digest(), "assignments": [a.id for a in assignments],
        "executed": sorted(timings), "timings": timings}, indent=2))


def expected_score(assignment: Assignment, student: str):
    return assignment.demo.expected.get(student)


def demo(assignments: list[Assignment], out: Path, workers: int = 1, log=print,
         execute_all: bool = False) -> tuple[list[Result], list[str]]:
    """Release, samples, autograde, and the samples that scored other than expected.

    Grading starts before the last reference finishes: while references still run on fewer cores
    than :func:`reference_jobs`, the free core grades the finished assignments one at a time (one
    worker, quickest reference first; on 2 cores that is the time the longest reference, math_grpo's,
    runs alone); the rest are graded together once every reference is done.
    Each call grades into the same OUT, which keeps the earlier calls' results."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
    submissions = out / "submissions"
    log(f"generating releases for {', '.join(a.id for a in assignments)} ...")
    timings, ready, results = {}, [], []

    def grade(batch: list[Assignment], workers: int) -> None:
        log(f"autograding {', '.join(a.id for a in batch)} in the tiny profile ...")
        results.extend(autograde(submissions, out, batch, Request(workers=workers, profile="tiny")))

    def grade_one_early() -> None:
        if ready:
            ready.sort(key=lambda a: (timings.get(a.id, 0.0), _code_cells(a)))  # the quickest to grade first
            grade([ready.pop(0)], workers=1)

    with tempfile.TemporaryDirectory(prefix="demo-") as scratch:
        course = new_course(assignments, where=Path(scratch))
        log("building sample submissions (reference, blank, buggy) ...")
        for assignment, seconds in _samples_as_ready(assignments, (course, submissions), env, log, execute_all,
                                                     idle=grade_one_early if workers > 1 else None):
            ready.append(assignment)
            if seconds is not None:
                timings[assignment.id] = seconds
    if ready:
        grade(ready, workers)
    write_run_manifest(out, assignments, timings)
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
