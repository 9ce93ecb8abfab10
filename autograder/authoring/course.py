"""Throwaway nbgrader course directories, and release generation from ``solutions/``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.utils import is_solution

from autograder.authoring import generate_memo
from autograder.authoring.stamping import stamp_course_sources
from autograder.manifest import HIDDEN_TESTS, Assignment, Patch
from autograder.nbconfig import write_course_config, write_kernelspec


class NbgraderError(RuntimeError):
    pass


def new_course(assignments: list[Assignment], where: Path | None = None, timeout: int = 120,
               install_url: str | None = None) -> Path:
    """A course directory with ``source/`` copied from the solutions and releases generated.

    Each notebook's install cell is stamped with the course's install URL (``course.toml``, or
    ``install_url``) and the kit's version first, so releases and grading agree on it."""

    course = Path(tempfile.mkdtemp(prefix="course-", dir=where))
    write_course_config(course, timeout)
    for assignment in assignments:
        shutil.copytree(assignment.source.parent, course / "source" / assignment.id,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "manifest.json", "tests",
                                                      "variants"))
        if assignment.tests_dir.is_dir():  # beside source/, never in a release: the grader's executor reads them
            shutil.copytree(assignment.tests_dir, course / HIDDEN_TESTS / assignment.id,
                            ignore=shutil.ignore_patterns("__pycache__"))
    stamp_course_sources(course, assignments, install_url)
    if not assignments:
        return course
    ids = [a.id for a in assignments]
    key, before = generate_memo.snapshot(course, ids)
    if generate_memo.restore(key, course):
        return course
    # one process for all assignments: importing nbgrader costs seconds
    merged = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    result = subprocess.run([sys.executable, "-m", "autograder.grading.job", "--generate", str(course), *ids],
                            cwd=course, env=merged, capture_output=True, text=True)
    for assignment in assignments:
        release = course / "release" / assignment.id / f"{assignment.id}.ipynb"
        if result.returncode != 0 or not release.exists():
            raise NbgraderError(
                f"nbgrader generate_assignment {assignment.id} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
            )
    generate_memo.remember(key, course, ids, before)
    return course


def canonical(notebook_path: Path) -> str:
    """The parts of a release that matter, serialised stably (so diffs are meaningful)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    return nbformat.writes(notebook)


def unwired_test_cells(assignment: Assignment) -> list[str]:
    """Graded test cells that call no hidden test of this assignment (the grader would score them 0)."""
    from autograder.hidden_test_files import HIDDEN_CALL

    problems = []
    for cell in nbformat.read(assignment.source, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        found = HIDDEN_CALL.search(cell.source)
        if found is None:
            problems.append(f"{meta.get('grade_id')}: no hidden_test(\"{assignment.id}\", \"test_...\") call")
        elif found.group("assignment") != assignment.id:
            problems.append(f"{meta.get('grade_id')}: calls a test of {found.group('assignment')!r}")
        elif not (assignment.tests_dir / f"{found.group('test')}.py").is_file():
            problems.append(f"{meta.get('grade_id')}: {assignment.tests_dir / found.group('test')}.py does not exist")
    return problems


def generate(assignments: list[Assignment], release_root: Path, check: bool = False) -> list[str]:
    """Regenerate releases into ``release_root/<id>/``; with ``check``, only report stale ones."""
    from autograder.authoring.points_table import PointsError, sync_points
    from autograder.authoring.stamping import ReleaseError, sync_setup_cells

    problems = [f"{a.id} {line}" for a in assignments for line in unwired_test_cells(a)]
    if problems:
        raise ReleaseError("graded test cells the grader cannot judge (see docs/AUTHORING.md):\n  "
                           + "\n  ".join(problems))
    try:
        stale = sync_points(assignments, check)
    except PointsError as error:
        raise ReleaseError(str(error)) from None
    stale += sync_setup_cells(assignments, check)
    with tempfile.TemporaryDirectory(prefix="generate-") as scratch:
        course = new_course(assignments, where=Path(scratch))
        for assignment in assignments:
            fresh_dir = course / "release" / assignment.id
            target_dir = release_root / assignment.id
            fresh_files = sorted(p.relative_to(fresh_dir) for p in fresh_dir.rglob("*") if p.is_file())
            if check:
                for relative in fresh_files:
                    committed = target_dir / relative
                    fresh = fresh_dir / relative
                    if not committed.exists():
                        stale.append(f"{committed} is missing")
                    elif relative.suffix == ".ipynb":
                        if canonical(committed) != canonical(fresh):
                            stale.append(f"{committed} differs from what solutions/{assignment.id} generates")
                    elif committed.read_bytes() != fresh.read_bytes():
                        stale.append(f"{committed} differs from solutions/{assignment.id}/{relative}")
            else:
                if target_dir.exists():
                    shutil.rmtree(target_dir)
                shutil.copytree(fresh_dir, target_dir)
    return stale


def solution_cells(notebook) -> dict[str, str]:
    """grade_id -> source for every solution cell of a notebook."""
    cells = {}
    for cell in notebook.cells:
        if is_solution(cell):
            cells[cell.metadata.nbgrader["grade_id"]] = cell.source
    return cells


def strip_solution_markers(source: str) -> str:
    kept = [line for line in source.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
    return "\n".join(kept)


def fill_release(release_path: Path, solution_path: Path, out_path: Path, patches: list[dict] | None = None,
                 replace: dict[str, str] | None = None) -> None:
    """Write the release with its answer cells filled from the solution, as a student would.

    ``replace`` ({grade_id: source}) swaps whole answer cells for the given source, then
    ``patches`` (grade_id, old, new) edit the (solution or replaced) source: that is how the
    demo and the mutation tests build plausible wrong or alternative submissions.
    """
    release = nbformat.read(release_path, as_version=4)
    answers = solution_cells(nbformat.read(solution_path, as_version=4))
    for grade_id, source in (replace or {}).items():
        if grade_id not in answers:
            raise ValueError(
                f"replacement for cell {grade_id!r} of {solution_path.name}: no answer cell has that grade_id "
                f"(answer cells: {', '.join(sorted(answers))})"
            )
        answers[grade_id] = source
    for patch in patches or []:
        patch = Patch(**patch) if isinstance(patch, dict) else patch
        source = answers.get(patch.grade_id)
        if source is None or source.count(patch.old) != 1:
            raise ValueError(
                f"patch for cell {patch.grade_id!r} of {solution_path.name}: the text to replace "
                "must occur exactly once in that solution cell"
            )
        answers[patch.grade_id] = source.replace(patch.old, patch.new)
    for cell in release.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if is_solution(cell) and meta.get("grade_id") in answers:
            cell.source = strip_solution_markers(answers[meta["grade_id"]])
    out_path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(release, out_path)


def prepare_template(assignments: list[Assignment], scratch: Path) -> Path:
    """The course every submission's private copy starts from (releases generated once)."""
    template = new_course(assignments, where=scratch)
    write_kernelspec(template / "jupyter")
    return template
