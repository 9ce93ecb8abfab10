"""The one place a batch reports. Each graded submission, in the order results come back: the merge
into ``OUT/gradebook.db`` (with the late penalty nbgrader deducted; ``grading.late`` has every rule of
it), the result's written-answer scores and penalty read back from it, its feedback page (the summary on
the body the grading worker kept) and result files, each written once here, and
``OUT/grades.csv`` rewritten so a killed batch keeps every row finished so far. At the end,
``OUT/lms_grades.csv`` once (:meth:`Recorder.finish`).
"""
from __future__ import annotations

import threading
from pathlib import Path

from autograder.grading.late import feedback_line, gradebook_duedate, gradebook_record
from autograder.outcome import Outcome, Result, Settings
from autograder.reports import gradebook, grades
from autograder.reports.feedback import (
    load_results,
    merge_results,
    write_grades,
    write_lms_grades,
    write_page,
    write_result_files,
)


class Recorder:
    """Records outcomes as they arrive (one at a time: a lock guards grades.csv and the gradebook)."""

    def __init__(self, out: Path, template: Path, settings: Settings, log=None):
        self.out, self.template, self.settings, self.log = Path(out), Path(template), settings, log
        self.duedate = gradebook_duedate(settings)
        self.progress: dict = {}
        self.earlier = load_results(self.out)  # OUT's results from before this batch, read once, not per submission
        if self.earlier:  # their written grades as formgrader has them now: grades.csv is then whole after each row
            grades.attach_manual(self.out, self.earlier)
        self.lock = threading.Lock()

    def __call__(self, outcome: Outcome) -> Result:
        result = outcome.result
        record = gradebook_record(outcome, self.settings)
        result.late_penalty = round(sum((record or {}).get("penalties", {}).values()), 6)
        line = feedback_line(result.late, result.submitted_at, result.timestamp_source, self.settings.late_penalty,
                             result.late_penalty)
        if line:
            result.feedback.append(line)
        self._drop_stand_in_time(result)
        try:
            if (self.template / "gradebook.db").exists():
                gradebook.merge(self.out, self.template / "gradebook.db", (result.assignment, result.student),
                                record, self.duedate, scores={name: pair[0] for name, pair in result.cells.items()})
        except Exception as error:  # noqa: BLE001 - the gradebook is a convenience; grades.csv is the record
            result.feedback.append(f"(grader) gradebook not updated: {type(error).__name__}: {error}"[:300])
        grades.attach_manual(self.out, [result])
        write_result_files(result, self.out)  # the only writes of this result's files and page
        write_page(result, self.out)
        with self.lock:  # a killed batch keeps every row finished so far
            self.progress[(result.student, result.assignment)] = result
            write_grades(merge_results(self.earlier, list(self.progress.values())), self.out / "grades.csv")
        if self.log:
            penalty = f" (late: -{result.late_penalty:g})" if result.late_penalty else ""
            self.log(f"  {result.student}/{result.assignment}: {result.score:g}/{result.max_score:g}{penalty} "
                     f"{result.status}")
        return result

    def finish(self, results: list[Result]) -> list[Result]:
        """After the last result: ``lms_grades.csv`` for every result in OUT (grades.csv is already whole)."""
        everything = merge_results(self.earlier, results)
        write_lms_grades(everything, grades.load_lms(self.out), self.out / "lms_grades.csv")
        return everything

    def _drop_stand_in_time(self, result: Result) -> None:
        """A late submission without a known time was stamped with the time of grading in its
        private course (``grading.late.stamp``): that time is not copied into OUT."""
        if result.late and not result.submitted_at:
            stamp = self.out / "submitted" / result.student / result.assignment / "timestamp.txt"
            stamp.unlink(missing_ok=True)
