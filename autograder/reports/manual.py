"""Manual grading in nbgrader's formgrader, on the autograder's OUT folder.

``autograde`` leaves OUT as an nbgrader course: ``nbgrader_config.py`` (root = OUT, the
gradebook), ``source/`` and ``release/`` (per assignment), ``submitted/`` and ``autograded/`` (the
notebooks of every submission; artifacts stay out) and ``gradebook.db``. So::

    cd OUT && jupyter server --ServerApp.jpserver_extensions="{'nbgrader.server_extensions.formgrader': True}"
    # open http://localhost:8888/formgrader, grade the written answers

then ``python -m autograder grades OUT`` adds the manual scores to ``grades.csv`` and
``lms_grades.csv``, re-renders every feedback page from nbgrader's own feedback (with the
grader's comments and scores) under the autograder's summary, scrubbed of hidden lines.

- Re-running ``autograde`` on the same OUT updates auto scores but never clears a manual score
  or marks a graded answer as ungraded again (``gradebook.merge``).
- ``nbgrader export`` in OUT writes ``nbgrader_grades.csv``; it cannot replace ``grades.csv``.
- Instructors overriding an autograded cell's score in formgrader are honoured (one feedback
  line says so).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.nbconfig import db_url, write_out_config
from autograder.reports.feedback import load_results, write_grades, write_lms_grades, write_page, write_result_files
from autograder.grading.outcome import Result

def prepare_out(out: Path, template: Path, assignments) -> None:
    """Copy each assignment's source and release into OUT and write OUT's nbgrader config."""
    out = Path(out)
    for assignment in assignments:
        for kind in ("source", "release"):
            source = Path(template) / kind / assignment.id
            if source.is_dir():
                target = out / kind / assignment.id
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(source, target)
    write_out_config(out)


def load_lms(out: Path) -> dict:
    try:
        return json.loads((Path(out) / "lms.json").read_text())
    except (OSError, ValueError):
        return {}


def manual_grades(out: Path) -> dict:
    """(student, assignment) -> {"written": {cell: score|None}, "overrides": {cell: score}, "comments": n}."""
    db = Path(out) / "gradebook.db"
    if not db.exists():
        return {}
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(db_url(db)) as gb:
        for assignment in gb.assignments:
            for submission in gb.assignment_submissions(assignment.name):
                entry = {"written": {}, "overrides": {}}
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.cell.cell_type == "markdown":
                            entry["written"][grade.name] = grade.manual_score
                        elif grade.manual_score is not None:
                            entry["overrides"][grade.name] = float(grade.manual_score)
                found[(submission.student.id, assignment.name)] = entry
    return found


def attach_manual(out: Path, results: list[Result], grades: dict | None = None) -> None:
    """Fill ``manual_score`` (all written answers graded) and apply score overrides from formgrader."""
    grades = manual_grades(out) if grades is None else grades
    for result in results:
        entry = grades.get((result.student, result.assignment))
        if not entry:
            continue
        written = entry["written"]
        if written and all(score is not None for score in written.values()):
            result.manual_score = float(sum(written.values()))
        else:
            result.manual_score = None
        for cell, score in entry["overrides"].items():
            if cell in result.cells and result.cells[cell][0] != score:
                result.score += score - result.cells[cell][0]
                result.cells[cell][0] = score
                line = f"{cell}: score set to {score:g} by the instructor"
                if line not in result.feedback:
                    result.feedback.append(line)


def regenerate(out: Path, log=print) -> list[Result]:
    """``python -m autograder grades OUT``: manual scores into grades.csv / lms_grades.csv, and
    every feedback page rebuilt from nbgrader's feedback (scores and comments from formgrader)."""
    from autograder.reports.scrub import Scrubber

    out = Path(out)
    if not (out / "gradebook.db").exists():
        raise ValueError(f"{out} has no gradebook.db: run `python -m autograder autograde ... --out {out}` first")
    write_out_config(out)
    results = load_results(out)
    attach_manual(out, results)
    scratch = Path(tempfile.mkdtemp(prefix=".feedback-", dir=out))
    try:
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", "--force",
                              f"--CourseDirectory.feedback_directory={scratch.name}"], cwd=out,
                             capture_output=True, text=True)
        if run.returncode != 0:
            log(f"warning: nbgrader generate_feedback failed; pages keep nbgrader's earlier part\n{run.stderr[-800:]}")
        scrubbers: dict[str, Scrubber] = {}
        for result in results:
            scrub = scrubbers.setdefault(result.assignment, Scrubber.from_notebooks(
                out / "source" / result.assignment / f"{result.assignment}.ipynb",
                out / "release" / result.assignment / f"{result.assignment}.ipynb"))
            page = scratch / result.student / result.assignment / f"{result.assignment}.html"
            if page.exists():
                write_page(result, out, page, scrub)
            else:
                from autograder.reports.feedback import rewrite_page_summary

                rewrite_page_summary(result, out)
            write_result_files(result, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_grades(results, out / "grades.csv")
    write_lms_grades(results, load_lms(out), out / "lms_grades.csv")
    return results
