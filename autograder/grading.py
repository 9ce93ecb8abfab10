"""Autograde a folder of submissions: each in its own process and its own course copy.

A submission can be anything a student uploads, so every step here turns failure into a grade
and a feedback line instead of an exception: the batch always completes.
"""
from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from .assignments import Assignment
from .course import new_course, run_nbgrader, write_config

HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.DOTALL)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class SubmissionLayoutError(ValueError):
    """The submissions folder is not ``<student>/<assignment>/<files>``."""


@dataclass
class Result:
    student: str
    assignment: str
    score: float = 0.0
    """Points earned on autograded cells (manual cells are not counted until graded)."""
    max_score: float = 0.0
    """Autograded points available."""
    manual_max: float = 0.0
    """Points in manually graded answer cells, still to be graded by a person."""
    status: str = "ok"
    """ok | failed-tests | timeout | crashed | invalid | missing"""
    seconds: float = 0.0
    cells: dict = field(default_factory=dict)
    """grade_id -> [score, max_score] for the autograded cells."""
    feedback: list = field(default_factory=list)
    """One line per failed check, safe to show the student."""


def discover(submissions: Path, assignment_ids: list[str]) -> list[tuple[str, str, Path]]:
    """(student, assignment, folder) for every submission; a clear error for a wrong layout."""
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise SubmissionLayoutError(f"submissions folder {submissions} does not exist")
    loose = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix == ".ipynb")
    if loose:
        raise SubmissionLayoutError(
            f"{submissions} holds notebooks directly ({', '.join(loose[:3])}); expected "
            "<student>/<assignment_id>/<assignment_id>.ipynb — use `python -m autograder collect` "
            "to sort an LMS download into that layout"
        )
    found = []
    for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for assignment_dir in sorted(p for p in student_dir.iterdir() if p.is_dir()):
            if assignment_dir.name in assignment_ids:
                found.append((student_dir.name, assignment_dir.name, assignment_dir))
    if not found:
        raise SubmissionLayoutError(
            f"no submissions found in {submissions}: expected folders <student>/<assignment_id>/ "
            f"with assignment_id one of {', '.join(assignment_ids)}"
        )
    return found


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _grade_cells(notebook) -> dict[str, float]:
    cells = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            cells[meta["grade_id"]] = float(meta.get("points", 0))
    return cells


def _manual_points(notebook) -> float:
    total = 0.0
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type != "code":
            total += float(meta.get("points", 0))
    return total


def _place_submission(folder: Path, assignment: Assignment, destination: Path) -> tuple[Path | None, str | None]:
    """Copy the submission into the course; returns the notebook path or a reason it is unusable."""
    shutil.copytree(folder, destination, symlinks=False, ignore_dangling_symlinks=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    expected = destination / f"{assignment.id}.ipynb"
    if not expected.exists():
        candidates = sorted(destination.glob("*.ipynb"))
        if len(candidates) == 1:
            candidates[0].rename(expected)
        elif not candidates:
            return None, f"no notebook found: submit {assignment.id}.ipynb"
        else:
            names = ", ".join(p.name for p in candidates)
            return None, f"several notebooks ({names}) and none named {assignment.id}.ipynb: submit exactly one"
    try:
        nbformat.validate(nbformat.read(expected, as_version=4))
    except Exception as error:  # not JSON, not a notebook, wrong schema
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return None, f"{assignment.id}.ipynb is not a valid Jupyter notebook ({reason}); re-download it from Jupyter/Colab"
    return expected, None


def _error_line(output) -> str:
    name = output.get("ename", "Error")
    value = ANSI.sub("", str(output.get("evalue", ""))).strip()
    return f"{name}: {value}" if value else name


def _sanitize_autograded(path: Path) -> tuple[list[str], bool, bool]:
    """Hide test source and traceback lines from the feedback; collect the failure messages.

    Returns (feedback lines, timed_out, kernel_died).
    """
    notebook = nbformat.read(path, as_version=4)
    lines, timed_out, died = [], False, False
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        is_test = meta.get("grade") and cell.cell_type == "code" and not meta.get("solution")
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            name = output.get("ename", "")
            timed_out |= name == "CellTimeoutError"
            died |= name in ("DeadKernelError",) or "DeadKernel" in str(output.get("evalue", ""))
            if is_test:
                lines.append(f"{meta['grade_id']}: {_error_line(output)}")
                output["traceback"] = [_error_line(output)]
        if is_test:
            cell.source = HIDDEN_REGION.sub("# (hidden tests run here when grading)", cell.source)
    nbformat.write(notebook, path)
    return lines, timed_out, died


def _read_gradebook(course: Path, assignment: str, student: str) -> dict[str, list[float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission_notebook(assignment, assignment, student)
        return {
            grade.name: [float(grade.score or 0.0), float(grade.max_score or 0.0)]
            for grade in submission.grades
            if grade.cell.cell_type == "code"
        }


def grade_one(template: Path, workdir: Path, student: str, assignment: Assignment, folder: Path,
              out: Path, env: dict) -> Result:
    started = time.perf_counter()
    release = nbformat.read(template / "release" / assignment.id / f"{assignment.id}.ipynb", as_version=4)
    grade_points = _grade_cells(release)
    result = Result(student, assignment.id, max_score=sum(grade_points.values()), manual_max=_manual_points(release),
                    cells={name: [0.0, points] for name, points in grade_points.items()})
    course = workdir / f"{_safe_id(student)}--{assignment.id}"
    shutil.copytree(template, course)
    write_config(course, assignment.timeout)
    submitted = course / "submitted" / student / assignment.id
    notebook, problem = _place_submission(folder, assignment, submitted)
    if notebook is None:
        result.status = "missing" if problem.startswith("no notebook") else "invalid"
        result.feedback.append(problem)
        return _finish(result, out, started, None)
    try:
        run = run_nbgrader(course, ["autograde", assignment.id, "--student", student, "--force"], env=env,
                           timeout=assignment.wall_timeout)
        log = run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        result.status = "timeout"
        result.feedback.append(f"grading stopped after the {assignment.wall_timeout} s limit for the whole notebook")
        return _finish(result, out, started, None)
    autograded = course / "autograded" / student / assignment.id / f"{assignment.id}.ipynb"
    if not autograded.exists():
        result.status = "crashed"
        reason = next((line.strip() for line in reversed(log.splitlines()) if "Error" in line or "error" in line), "")
        result.feedback.append(f"the notebook could not be graded: {ANSI.sub('', reason)[:300] or 'nbgrader produced no output'}")
        return _finish(result, out, started, None)
    lines, timed_out, died = _sanitize_autograded(autograded)
    result.feedback.extend(lines)
    try:
        scores = _read_gradebook(course, assignment.id, student)
        for name, pair in scores.items():
            result.cells[name] = pair
        result.score = sum(pair[0] for pair in result.cells.values())
    except Exception as error:  # a gradebook without this submission: nbgrader gave up early
        result.status = "crashed"
        result.feedback.append(f"no grades were recorded ({type(error).__name__})")
    if timed_out:
        result.status = "timeout"
        result.feedback.append(f"a cell ran past the {assignment.timeout} s per-cell limit and was interrupted")
    elif died or "DeadKernelError" in log:
        result.status = "crashed"
        result.feedback.append("the Python kernel died while running the notebook (e.g. os._exit or out of memory)")
    elif result.status == "ok" and result.score < result.max_score:
        result.status = "failed-tests"
    feedback = run_nbgrader(course, ["generate_feedback", assignment.id, "--student", student, "--force"], env=env,
                            timeout=300)
    html_file = course / "feedback" / student / assignment.id / f"{assignment.id}.html"
    return _finish(result, out, started, html_file if feedback.returncode == 0 and html_file.exists() else None)


def _finish(result: Result, out: Path, started: float, html_file: Path | None) -> Result:
    result.seconds = round(time.perf_counter() - started, 1)
    target = out / "feedback" / result.student / result.assignment
    target.mkdir(parents=True, exist_ok=True)
    if html_file is not None:
        shutil.copy(html_file, target / f"{result.assignment}.html")
    else:  # still give the student a page that says what happened
        items = "".join(f"<li>{html.escape(line)}</li>" for line in result.feedback)
        (target / f"{result.assignment}.html").write_text(
            f"<html><body><h1>{html.escape(result.assignment)}: {result.score:g} / {result.max_score:g}</h1>"
            f"<p>status: {html.escape(result.status)}</p><ul>{items}</ul></body></html>"
        )
    (target / "result.json").write_text(json.dumps(asdict(result), indent=2))
    return result


def autograde(submissions: Path, out: Path, assignments: list[Assignment], workers: int = 1,
              profile: str = "tiny") -> list[Result]:
    """Grade every submission; write OUT/grades.csv and OUT/feedback/<student>/<assignment>/."""
    by_id = {a.id: a for a in assignments}
    jobs = discover(Path(submissions), list(by_id))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    needed = [by_id[name] for name in dict.fromkeys(job[1] for job in jobs)]
    env = {"COURSE_PROFILE": profile, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
           "HF_DATASETS_OFFLINE": os.environ.get("HF_DATASETS_OFFLINE", "1"), "MPLBACKEND": "Agg",
           "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        template = new_course(needed, where=Path(scratch))
        workdir = Path(scratch) / "work"
        workdir.mkdir()

        def run(job):
            student, assignment_id, folder = job
            try:
                return grade_one(template, workdir, student, by_id[assignment_id], folder, out, env)
            except Exception as error:  # never lose the batch to one submission
                result = Result(student, assignment_id, status="crashed",
                                feedback=[f"grader error: {type(error).__name__}: {error}"[:400]])
                return _finish(result, out, time.perf_counter(), None)

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            results = list(pool.map(run, jobs))
    write_grades(results, out / "grades.csv")
    return results


def write_grades(results: list[Result], path: Path) -> None:
    cell_names = sorted({name for result in results for name in result.cells})
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "assignment", "score", "max_score", "manual_max", "status", "seconds",
                         *cell_names, "feedback"])
        for r in results:
            cells = [f"{r.cells[name][0]:g}" if name in r.cells else "" for name in cell_names]
            writer.writerow([r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", f"{r.manual_max:g}",
                             r.status, r.seconds, *cells, " | ".join(r.feedback)])


def format_table(results: list[Result]) -> str:
    rows = [("student", "assignment", "score", "status")]
    rows += [(r.student, r.assignment, f"{r.score:g} / {r.max_score:g}", r.status) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
