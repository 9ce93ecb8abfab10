"""Late work, through nbgrader's own late-submission machinery.

The grader decides once whether a submission is late (``grading.submission.new_result``: the
LMS's own flag when ``collect`` recorded one, else the submission time against ``--deadline``).
nbgrader then deducts the penalty itself, so every view of the grade agrees (``grades.csv``,
``lms_grades.csv``, the feedback page, formgrader, ``nbgrader export``):

1. :func:`stamp` writes the submission's ``timestamp.txt`` and the private course's due date so
   that nbgrader sees the submission as late exactly when the grader does (the real deadline goes
   into ``OUT/gradebook.db``; the private course is thrown away after grading);
2. nbgrader's ``AssignLatePenalties`` (in every private course's autograde preprocessors) asks
   :class:`FractionPenalty` -- configured by :func:`nbgrader_settings` with ``--late-penalty`` --
   for the penalty: that fraction of the notebook's autograded score (the written answers are not
   graded yet at that point);
3. ``reports.gradebook.extract`` reads ``late_submission_penalty`` from the private gradebook;
   :func:`gradebook_record` supplies the same rule's penalty for a job killed before nbgrader got
   there, and ``grading.record`` merges the record into ``OUT/gradebook.db`` (with
   :func:`gradebook_duedate`) and puts the penalty into the result.

Everything about lateness is in this module; extensions and waivers (``--extensions``) too.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


def penalty_for(score: float, fraction: float) -> float | None:
    """The points a late notebook loses: ``fraction`` of its score (None: nothing deducted)."""
    if not fraction or fraction <= 0:
        return None
    return round(max(0.0, float(score or 0.0)) * min(float(fraction), 1.0), 6)


class FractionPenalty(LateSubmissionPlugin):
    """nbgrader plugin: a late notebook loses ``fraction`` of its score (``--late-penalty``)."""

    fraction = Float(0.0, help="Fraction of the notebook's score deducted when it is late (0 to 1).").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        # nbgrader calls this only for a submission it sees as late, and the grader arranged
        # (see stamp) that it sees exactly the submissions the grader marked late
        penalty = penalty_for(score, self.fraction)
        self.log.info("late by %.0f s: %s points deducted (%g of %g)", total_seconds_late, penalty, self.fraction,
                      score)
        return penalty


def nbgrader_settings(fraction: float) -> dict[str, object]:
    """nbgrader's ``AssignLatePenalties`` (an autograde preprocessor) asks :class:`FractionPenalty` for the
    penalty of a late notebook: ``fraction`` of its autograded score (``--late-penalty``). With 0
    nbgrader's own default plugin stays: nothing deducted."""
    if not fraction:
        return {}
    return {"AssignLatePenalties.plugin_class": "autograder.grading.late.FractionPenalty",
            "FractionPenalty.fraction": float(fraction)}


def gradebook_record(outcome, settings) -> dict | None:
    """The record merged into OUT's gradebook. nbgrader's penalty comes with the record; a job
    killed before nbgrader finished has none, so the grader asks the same plugin's rule for the
    points it kept (a late notebook never escapes the penalty by running out of time)."""
    result, record = outcome.result, outcome.record
    if record is not None and not result.submitted_at:
        record = {**record, "timestamp": None}  # the private course's stand-in time is no submission time
    if record is None and result.late and result.score > 0 and settings.late_penalty:
        record = {"grades": {}, "comments": {}, "timestamp": None,
                  "penalties": {result.assignment: penalty_for(result.score, settings.late_penalty) or 0.0}}
    return record


def gradebook_duedate(settings) -> datetime | None:
    """The course's deadline as OUT's gradebook stores it (naive UTC), or None without ``--deadline``."""
    deadline = settings.deadline
    return deadline.astimezone(UTC).replace(tzinfo=None) if isinstance(deadline, datetime) else None


def _utc(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def stamp(course: Path, submitted: Path, assignment_id: str, submitted_at: str, late: bool,
          deadline: datetime | None) -> None:
    """``submitted/timestamp.txt`` and the private gradebook's due date for one submission.

    On time: the submission time (when known) and no due date. Late: the submission time and
    the deadline when the two show it late; otherwise (the LMS's flag decided: an LMS with
    per-student due dates, or no ``--deadline``) a due date one second before the submission
    time, and, with no submission time at all, the time of grading as the private timestamp
    (``grading.record`` keeps it out of ``OUT``)."""
    from nbgrader.api import Gradebook

    from autograder.nbconfig import db_url

    when = _utc(submitted_at) if submitted_at else None
    if late and when is None:
        when = datetime.now(UTC)
    if when is not None:
        (Path(submitted) / "timestamp.txt").write_text(when.strftime(TIMESTAMP_FORMAT))
    due = None
    if late:
        deadline = deadline.astimezone(UTC) if isinstance(deadline, datetime) and deadline.tzinfo else (
            deadline.replace(tzinfo=UTC) if isinstance(deadline, datetime) else None)
        due = deadline if deadline is not None and when > deadline else when - timedelta(seconds=1)
    database = Path(course) / "gradebook.db"
    if not database.exists():
        return
    with Gradebook(db_url(database)) as gb:
        assignment = gb.find_assignment(assignment_id)
        assignment.duedate = due.replace(tzinfo=None) if due is not None else None  # nbgrader keeps naive UTC
        gb.db.commit()


def feedback_line(late: bool, submitted_at: str, source: str, fraction: float, penalty: float) -> str | None:
    """The feedback line that says a submission was late and what it cost."""
    if not late:
        return None
    when = f"submitted {submitted_at}" if submitted_at else "submitted after the deadline"
    per = f", per {source}" if source else ""
    if not fraction:
        return f"late ({when}{per}): marked only, nothing deducted"
    return (f"late ({when}{per}): {fraction:.0%} of the autograded points deducted "
            f"({penalty:g} points)")


WAIVED = "waived"


def read_extensions(path: Path) -> dict[str, str]:
    """student folder -> an ISO deadline of that student's own, or "waived" (no late penalty), from a CSV with the
    columns ``student,deadline``; ValueError (one line naming the row) for anything else."""
    import csv

    extensions = {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise ValueError(f"--extensions {path}: {error.strerror or error}") from None
    for number, row in enumerate(rows, start=2):
        student, deadline = (row.get("student") or "").strip(), (row.get("deadline") or "").strip()
        if not student or not deadline:
            raise ValueError(f"--extensions {path}, line {number}: needs the columns student,deadline (a deadline "
                             f"like 2026-12-08T23:59, or {WAIVED})")
        if deadline.lower() != WAIVED and _utc(deadline) is None:
            raise ValueError(f"--extensions {path}, line {number}: {deadline!r} is neither an ISO deadline "
                             f"(2026-12-08T23:59) nor {WAIVED}")
        extensions[student] = WAIVED if deadline.lower() == WAIVED else deadline
    return extensions


def with_extension(late: bool, submitted_at: str, extension: str | None,
                   upload_time: str = "") -> tuple[bool, str | None]:
    """(late, the feedback line) once a student's extension applies: "waived" is never late; an extension's
    deadline decides from the submission time. Without one (a Canvas download has only its ``_late`` flag), the
    upload's ZIP time (a local time of unknown zone) decides when it is more than 14 hours (any zone) from the
    extension's deadline; otherwise the LMS's flag stands, with a line saying so."""
    if extension is None:
        return late, None
    if extension == WAIVED:
        return False, "late penalty waived for you (an approved extension)"
    when, due = _utc(submitted_at) if submitted_at else None, _utc(extension)
    if when is None and upload_time and due is not None:
        local = _utc(upload_time)
        if local is not None and abs((local - due).total_seconds()) > 14 * 3600:
            when = local
    if when is None or due is None:
        return late, f"your extension to {extension} could not be checked (no submission time): the LMS's flag stands"
    return when > due, f"your extension: due {extension}" + (" (submitted after it)" if when > due else "")
