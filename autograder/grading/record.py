"""What happens to each graded submission, in the order results come back: the late penalty,
the merge into ``OUT/gradebook.db``, the feedback summary, and ``OUT/grades.csv`` rewritten so a
killed batch keeps every row finished so far.
"""
from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from autograder.grading.outcome import Outcome, Result, Settings
from autograder.reports import gradebook, manual
from autograder.reports.feedback import all_results, rewrite_page_summary, write_grades, write_result_files


def late_line(result: Result, settings: Settings) -> str | None:
    """Apply the late penalty to ``result`` (if it is late); the feedback line that says so."""
    if not result.late:
        return None
    when = result.submitted_at or "after the deadline"
    if not settings.late_penalty:
        return f"late: submitted {when} (per {result.timestamp_source}), marked only, nothing deducted"
    deducted = round(result.score * settings.late_penalty, 6)
    result.score -= deducted
    return (f"late (submitted {when}, per {result.timestamp_source}): {settings.late_penalty:.0%} deducted "
            f"({deducted:g} points)")


class Recorder:
    """Records outcomes as they arrive (one at a time: a lock guards grades.csv and the gradebook)."""

    def __init__(self, out: Path, template: Path, settings: Settings, log=None):
        self.out, self.template, self.settings, self.log = Path(out), Path(template), settings, log
        self.duedate = (settings.deadline.astimezone(UTC).replace(tzinfo=None)
                        if isinstance(settings.deadline, datetime) else None)
        self.progress: dict = {}
        self.lock = threading.Lock()

    def __call__(self, outcome: Outcome) -> Result:
        result = outcome.result
        line = late_line(result, self.settings)
        if line:
            result.feedback.append(line)
        try:
            if (self.template / "gradebook.db").exists():
                gradebook.merge(self.out, self.template / "gradebook.db", result.assignment, result.student,
                                outcome.record, self.duedate)
        except Exception as error:  # noqa: BLE001 - the gradebook is a convenience; grades.csv is the record
            result.feedback.append(f"(grader) gradebook not updated: {type(error).__name__}: {error}"[:300])
        manual.attach_manual(self.out, [result])
        write_result_files(result, self.out)
        rewrite_page_summary(result, self.out)
        with self.lock:  # a killed batch keeps every row finished so far
            self.progress[(result.student, result.assignment)] = result
            write_grades(all_results(self.out, list(self.progress.values())), self.out / "grades.csv")
        if self.log:
            self.log(f"  {result.student}/{result.assignment}: {result.score:g}/{result.max_score:g} {result.status}")
        return result
