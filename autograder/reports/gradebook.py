"""OUT/gradebook.db: nbgrader's gradebook for the whole batch, merged one submission at a time.

Each submission is graded in its own throwaway course with its own gradebook; afterwards the
grader extracts that submission's grades (a plain dict, so it can come back from a Ray worker)
and merges it here. Re-running ``autograde`` on the same OUT updates auto scores and comments
in place; manual scores a person entered in formgrader are kept, and an answer once graded is
never marked as needing grading again.
"""
from __future__ import annotations

import threading
from pathlib import Path

from autograder.nbconfig import db_url

_lock = threading.Lock()


def extract(course: Path, assignment: str, student: str) -> dict:
    """This submission's grades and comments from a private course's gradebook."""
    from nbgrader.api import Gradebook

    record = {"grades": {}, "comments": {}, "timestamp": None, "penalties": {}}
    with Gradebook(db_url(course / "gradebook.db")) as gb:
        submission = gb.find_submission(assignment, student)
        record["timestamp"] = submission.timestamp.isoformat() if submission.timestamp else None
        for notebook in submission.notebooks:
            # what nbgrader's late-submission plugin deducted (AssignLatePenalties; see grading.late)
            record["penalties"][notebook.name] = float(notebook.late_submission_penalty or 0.0)
            for grade in notebook.grades:
                record["grades"][f"{notebook.name}/{grade.name}"] = {
                    "auto_score": grade.auto_score, "needs_manual_grade": bool(grade.needs_manual_grade)}
            for comment in notebook.comments:
                record["comments"][f"{notebook.name}/{comment.name}"] = comment.auto_comment
    return record


def graded_copy(out: Path, student: str, assignment: str, notebook: str) -> Path | None:
    """OUT/autograded/<student>/<assignment>/<notebook>.ipynb, the copy formgrader opens (None: none)."""
    path = Path(out) / "autograded" / student / assignment / f"{notebook}.ipynb"
    return path if path.is_file() else None


def _ensure_assignment(gb, template_db: Path, assignment: str, duedate=None) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    try:
        gb.find_assignment(assignment)
        if duedate is not None:
            gb.update_or_create_assignment(assignment, duedate=duedate)
        return
    except MissingEntry:
        pass
    gb.update_or_create_assignment(assignment, **({"duedate": duedate} if duedate is not None else {}))
    with Gradebook(db_url(template_db)) as template:
        for notebook in template.find_assignment(assignment).notebooks:
            gb.update_or_create_notebook(notebook.name, assignment)
            for cell in notebook.grade_cells:
                gb.update_or_create_grade_cell(cell.name, notebook.name, assignment, max_score=cell.max_score,
                                               cell_type=cell.cell_type)
            for cell in notebook.solution_cells:
                gb.update_or_create_solution_cell(cell.name, notebook.name, assignment)
            for cell in notebook.task_cells:
                gb.update_or_create_task_cell(cell.name, notebook.name, assignment, max_score=cell.max_score,
                                              cell_type=cell.cell_type)
            for cell in notebook.source_cells:
                gb.update_or_create_source_cell(cell.name, notebook.name, assignment, cell_type=cell.cell_type,
                                                locked=cell.locked, source=cell.source, checksum=cell.checksum)


def merge(out: Path, template_db: Path, who: tuple[str, str], record: dict | None, duedate=None,
          scores: dict | None = None) -> None:
    """Create or update OUT/gradebook.db's entry for this submission, ``who`` = (assignment,
    student) (a None record: graded as zero).

    ``scores`` ({grade_id: points}): the grader's final autograded scores (``Result.cells``);
    they win over the record's, so the gradebook, formgrader and ``nbgrader export`` show what
    grades.csv shows. ``record["penalties"]`` ({notebook: points}) is nbgrader's late penalty.
    A submission without a graded notebook in OUT (none uploaded, not readable) has no written
    answer formgrader could show: those cells score 0 and are not left open."""
    from nbgrader.api import Gradebook, MissingEntry

    out, (assignment, student) = Path(out), who
    with _lock:
        import os
        import shutil
        import sys

        # nbgrader runs `alembic` from PATH when it creates or upgrades a database
        if os.path.dirname(sys.executable) not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
        if not (out / "gradebook.db").exists() and Path(template_db).exists():
            shutil.copy(template_db, out / "gradebook.db")
        if not (out / "nbgrader_config.py").exists():
            from autograder.nbconfig import write_out_config

            write_out_config(out)
        with Gradebook(db_url(out / "gradebook.db"), "course-kit") as gb:
            _ensure_assignment(gb, template_db, assignment, duedate)
            gb.update_or_create_student(student)
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                import warnings

                with warnings.catch_warnings():  # nbgrader's own autoflush chatter (SAWarning)
                    warnings.simplefilter("ignore")
                    submission = gb.add_submission(assignment, student)
            record = record or {}
            if record.get("timestamp"):
                from nbgrader.utils import parse_utc

                submission.timestamp = parse_utc(record["timestamp"])
            grades = record.get("grades", {})
            comments = record.get("comments", {})
            penalties = record.get("penalties")
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    saved = grades.get(f"{notebook.name}/{grade.name}")
                    if saved is not None:
                        grade.auto_score = saved["auto_score"]
                        # a score a person already gave stays given: re-running never un-grades
                        grade.needs_manual_grade = bool(saved["needs_manual_grade"]) and grade.manual_score is None
                    elif grade.cell.cell_type == "code" or not graded_copy(out, student, assignment, notebook.name):
                        # nothing gradable came back: no points; no notebook formgrader could open: nothing to grade
                        grade.auto_score = 0.0
                        grade.needs_manual_grade = False
                    if scores and grade.cell.cell_type == "code" and grade.name in scores:
                        grade.auto_score = float(scores[grade.name])
                for comment in notebook.comments:
                    if f"{notebook.name}/{comment.name}" in comments:
                        comment.auto_comment = comments[f"{notebook.name}/{comment.name}"]
                if penalties is not None:  # re-grading replaces the penalty (0 when no longer late)
                    notebook.late_submission_penalty = float(penalties.get(notebook.name) or 0.0) or None
            gb.db.commit()
