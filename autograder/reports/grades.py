"""Manual grading in nbgrader's formgrader, on the autograder's OUT folder.

``autograde`` leaves OUT as an nbgrader course: ``nbgrader_config.py`` (root = OUT, the
gradebook), ``source/`` and ``release/`` (per assignment), ``submitted/`` and ``autograded/`` (the
notebooks of every submission; artifacts stay out) and ``gradebook.db``. So::

    python -m autograder formgrader OUT     # prints the URL to open (reports.formgrader)
    python -m autograder grades OUT         # after grading: regenerate, below

``grades`` (:func:`regenerate`) reads every written answer's score and comment from the
gradebook, writes ``grades.csv`` and ``lms_grades.csv``, and rebuilds each feedback page: nbgrader's
own feedback (``nbgrader generate_feedback ASSIGNMENT --force`` in OUT: the grader's scores and
comments on each cell, the late penalty) under the autograder's summary, scrubbed of hidden lines.
One total everywhere: autograded + written - late penalty, the same number nbgrader shows.

- A written answer is *graded* when a person scored it in formgrader, or when nbgrader scored it
  itself (a blank answer: 0). It is *open* while nbgrader marks it as needing a manual grade and
  formgrader can show it (the submission has a graded notebook in OUT). The written total counts
  once no answer of that submission is open; a submission with no notebook has nothing open.
- Re-running ``autograde`` on the same OUT updates auto scores but never clears a manual score
  or marks a graded answer as ungraded again (``gradebook.merge``).
- ``nbgrader export`` in OUT writes ``nbgrader_grades.csv`` (its ``score`` = our ``total``); it
  never replaces ``grades.csv``.
- An instructor's score for an autograded cell in formgrader is honoured (one feedback line says so).
"""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.manifest import HIDDEN_TESTS
from autograder.nbconfig import db_url, write_out_config
from autograder.outcome import Result
from autograder.reports.feedback import (
    keep_body,
    load_results,
    total,
    write_grades,
    write_lms_grades,
    write_page,
    write_result_files,
)
from autograder.reports.gradebook import graded_copy


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _same_tree(a: Path, b: Path) -> bool:
    compared = filecmp.dircmp(a, b)
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    return not mismatch and not errors and all(_same_tree(a / d, b / d) for d in compared.common_dirs)


def prepare_out(out: Path, template: Path, assignments, log=_stderr) -> None:
    """Copy each assignment's source and release into OUT and write OUT's nbgrader config; a
    copy that differs from an earlier run's (the solution changed) is replaced with a line."""
    out = Path(out)
    for assignment in assignments:
        for kind in ("source", "release", HIDDEN_TESTS):
            source = Path(template) / kind / assignment.id
            if source.is_dir():
                target = out / kind / assignment.id
                if target.exists():
                    if target.is_dir() and _same_tree(source, target):
                        continue
                    log(f"replacing {target} (it differs from what solutions/{assignment.id} generates now)")
                    shutil.rmtree(target) if target.is_dir() else target.unlink()
                shutil.copytree(source, target)
    ensure_out_config(out, log)


def ensure_out_config(out: Path, log=_stderr) -> None:
    """OUT/nbgrader_config.py as the grader writes it; a different one (edited by hand) is kept
    as ``nbgrader_config.py.orig`` with a line saying so."""
    path = Path(out) / "nbgrader_config.py"
    before = path.read_text() if path.exists() else None
    write_out_config(out)
    if before is not None and before != path.read_text():
        keep = path.with_name("nbgrader_config.py.orig")
        keep.write_text(before)
        log(f"{path} differed from the grader's: rewritten, the old one kept as {keep.name}")


def load_lms(out: Path) -> dict:
    try:
        return json.loads((Path(out) / "lms.json").read_text())
    except (OSError, ValueError):
        return {}


@dataclass
class SubmissionGrades:
    """One submission's entry in OUT/gradebook.db, as ``grades`` reads it."""
    written: dict = field(default_factory=dict)
    """Written-answer cell -> points (None while open)."""
    open: list = field(default_factory=list)
    """Written-answer cells still to grade in formgrader."""
    overrides: dict = field(default_factory=dict)
    """Autograded cell -> points an instructor set in formgrader."""
    comments: dict = field(default_factory=dict)
    """Cell -> the grader's comment."""
    penalty: float = 0.0
    """nbgrader's late-submission penalty (points)."""
    gradebook_total: float = 0.0
    """nbgrader's own total: every cell's score minus the penalty (what its feedback and export show)."""


def manual_grades(out: Path, only: tuple[str, str] | None = None) -> dict:
    """(student, assignment) -> :class:`SubmissionGrades` (``only``: that one submission)."""
    db = Path(out) / "gradebook.db"
    if not db.exists():
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    found = {}
    with Gradebook(db_url(db)) as gb:
        if only is not None:
            try:
                submissions = [gb.find_submission(only[1], only[0])]
            except MissingEntry:
                return {}
        else:
            submissions = [s for a in gb.assignments for s in gb.assignment_submissions(a.name)]
        for submission in submissions:
            student, assignment = submission.student.id, submission.assignment.name
            entry = SubmissionGrades()
            for notebook in submission.notebooks:
                viewable = graded_copy(out, student, assignment, notebook.name) is not None
                entry.penalty += float(notebook.late_submission_penalty or 0.0)
                entry.gradebook_total += float(notebook.score or 0.0)
                for grade in notebook.grades:
                    given = grade.manual_score if grade.manual_score is not None else grade.auto_score
                    if grade.cell.cell_type == "markdown":
                        if viewable and (grade.needs_manual_grade or given is None):
                            entry.written[grade.name] = None
                            entry.open.append(grade.name)
                        else:  # graded by a person, scored 0 by nbgrader (blank), or nothing to grade
                            entry.written[grade.name] = float(grade.score or 0.0)
                    elif grade.manual_score is not None or grade.extra_credit:
                        entry.overrides[grade.name] = float(grade.score)
                for comment in notebook.comments:
                    if comment.comment:
                        entry.comments[comment.name] = comment.comment
            entry.gradebook_total -= entry.penalty
            found[(student, assignment)] = entry
    return found


def attach_manual(out: Path, results: list[Result], grades: dict | None = None) -> None:
    """Written-answer total (once none is open), late penalty and score overrides from the gradebook."""
    if grades is None:
        grades = (manual_grades(out, (results[0].student, results[0].assignment)) if len(results) == 1
                  else manual_grades(out))
    for result in results:
        entry = grades.get((result.student, result.assignment))
        if not entry:
            continue
        result.manual_score = (float(sum(entry.written.values())) if result.manual_max and not entry.open
                               else None)
        result.open_answers = list(entry.open)
        result.late_penalty = round(entry.penalty, 6)
        for cell, score in entry.overrides.items():
            if cell in result.cells and result.cells[cell][0] != score:
                result.score += score - result.cells[cell][0]
                result.cells[cell][0] = score
                line = f"{cell}: score set to {score:g} by the instructor"
                if line not in result.feedback:
                    result.feedback.append(line)


def check_out(out: Path, command: str = "grades") -> None:
    """ValueError (one line) unless OUT is a folder ``autograde`` wrote; the line says what to run."""
    out = Path(out)
    if (out / "gradebook.db").is_file() and any(out.glob("feedback/*/*/result.json")):
        return
    if not out.exists():
        raise ValueError(f"{out} does not exist: run `python -m autograder autograde SUBMISSIONS --out {out}` "
                         f"first, then `python -m autograder {command} {out}`")
    if (out / "_collect_report.json").exists() or any(out.glob("*/*/*.ipynb")) and not (out / "gradebook.db").exists():
        raise ValueError(f"{out} holds submissions, not grades: run `python -m autograder autograde {out} --out "
                         f"GRADED` (a new folder), then `python -m autograder {command} GRADED`")
    if (out / "gradebook.db").is_file() and any(out.glob("feedback/*/*/*.html")):
        raise ValueError(f"{out}/feedback has pages but no result.json (nbgrader's own feedback command wrote there, "
                         f"as older versions of the kit let it): run `python -m autograder autograde SUBMISSIONS "
                         f"--out {out}` again to rebuild them (written grades in the gradebook are kept)")
    raise ValueError(f"{out} is not a folder `autograde` wrote (no gradebook.db and feedback/): run `python -m "
                     f"autograder autograde SUBMISSIONS --out OUT` first, then `python -m autograder {command} OUT`")


def repair_graded(out: Path, log=_stderr) -> int:
    """Graded notebooks written before the executor fix carried ``outputs`` on markdown cells
    (invalid nbformat: formgrader said "Notebook JSON is invalid"); drop them, say how many."""
    import nbformat

    fixed = 0
    for path in sorted(Path(out).glob("autograded/*/*/*.ipynb")):
        raw = json.loads(path.read_text())
        changed = False
        for cell in raw.get("cells", []):
            if cell.get("cell_type") != "code":
                for key in ("outputs", "execution_count"):
                    if key in cell:
                        del cell[key]
                        changed = True
        if changed:
            notebook = nbformat.from_dict(raw)
            nbformat.validate(notebook)
            nbformat.write(notebook, path)
            fixed += 1
    if fixed:
        log(f"repaired {fixed} graded notebook(s) in {Path(out) / 'autograded'}: markdown cells carried outputs "
            "(written by an older grader; formgrader refused them as invalid)")
    return fixed


def nbgrader_feedback(out: Path, assignments: list[str], scratch: Path) -> None:
    """``nbgrader generate_feedback ASSIGNMENT --force`` in OUT for each assignment, into ``scratch``
    (OUT/feedback holds the autograder's pages). RuntimeError with nbgrader's message on failure."""
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    for assignment in assignments:
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", assignment, "--force",
                              f"--CourseDirectory.feedback_directory={scratch.name}"], cwd=out, env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
            errors = [line for line in lines if "ERROR" in line or "Error" in line] or lines
            why = errors[-1][:300] if errors else "?"
            raise RuntimeError(f"nbgrader generate_feedback {assignment} failed in {out} ({why}); no page, grades.csv "
                               "or lms_grades.csv was changed")


@dataclass
class Regenerated:
    results: list
    open: dict
    """(student, assignment) -> written-answer cells still to grade."""
    disagreements: list
    """One line per submission whose total differs from nbgrader's (should never happen)."""


def regenerate(out: Path, log=_stderr) -> Regenerated:
    """``python -m autograder grades OUT``: written scores and comments from formgrader into
    grades.csv / lms_grades.csv and every feedback page (nbgrader's part rebuilt)."""
    from autograder.reports.scrub import Scrubber

    out = Path(out)
    check_out(out)
    ensure_out_config(out, log)
    repair_graded(out, log)
    results = load_results(out)
    grades = manual_grades(out)
    attach_manual(out, results, grades)
    assignments = sorted({r.assignment for r in results if graded_copy(out, r.student, r.assignment, r.assignment)})
    scratch = Path(tempfile.mkdtemp(prefix=".feedback-", dir=out))
    try:
        nbgrader_feedback(out, assignments, scratch)  # everything first: a failure changes nothing
        missing = [f"{r.student}/{r.assignment}" for r in results
                   if graded_copy(out, r.student, r.assignment, r.assignment)
                   and not (scratch / r.student / r.assignment / f"{r.assignment}.html").exists()]
        if missing:
            raise RuntimeError(f"nbgrader generate_feedback wrote no page for {', '.join(missing[:5])}"
                               f"{' ...' if len(missing) > 5 else ''}; no page, grades.csv or lms_grades.csv was "
                               "changed")
        scrubbers: dict[str, Scrubber] = {}
        for result in results:
            page = scratch / result.student / result.assignment / f"{result.assignment}.html"
            if page.exists():
                scrub = scrubbers.setdefault(result.assignment, Scrubber.from_notebooks(
                    out / "source" / result.assignment / f"{result.assignment}.ipynb",
                    out / "release" / result.assignment / f"{result.assignment}.ipynb"))
                keep_body(result, out, page, scrub)
            write_page(result, out)  # no notebook: the summary alone says what happened
            write_result_files(result, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_grades(results, out / "grades.csv")
    write_lms_grades(results, load_lms(out), out / "lms_grades.csv")
    disagreements = []
    for result in results:
        entry = grades.get((result.student, result.assignment))
        ours = total(result)[0]
        if entry is not None and result.manual_score is not None and abs(ours - entry.gradebook_total) > 1e-6:
            disagreements.append(f"{result.student}/{result.assignment}: grades.csv total {ours:g}, "
                                 f"gradebook {entry.gradebook_total:g}")
    open_cells = {(r.student, r.assignment): list(grades[(r.student, r.assignment)].open)
                  for r in results if (r.student, r.assignment) in grades and grades[(r.student, r.assignment)].open}
    return Regenerated(results, open_cells, disagreements)
