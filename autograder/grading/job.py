"""One submission's nbgrader work in one process: autograde, hide hidden tests, generate feedback.

    python -m autograder.grading.job COURSE ASSIGNMENT STUDENT
    python -m autograder.grading.job --generate COURSE ASSIGNMENT...

Runs inside the private course copy, as the grader (only the kernel it starts is sandboxed).
``grading.submission`` starts it (usually as a fork of the worker's job server, which has nbgrader
imported already) and kills its whole process tree past the assignment's time limit. Prints
nbgrader's log, and writes a :class:`~autograder.outcome.JobSummary` as JSON to the file
its :class:`~autograder.grading.job_settings.JobSettings` name: the grader decides the
submission's status from that file, never from the log.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from autograder.grading.job_settings import JobSettings


def _api(course: Path):
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    return NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())


def generate(course: Path, assignment_ids: list[str]) -> int:
    """``nbgrader generate_assignment`` for several assignments in one process."""
    os.chdir(course)
    api = _api(course)
    failed = []
    for assignment in assignment_ids:
        run = api.generate_assignment(assignment, force=True)
        print(run.get("log", ""))
        if not run.get("success"):
            print(run.get("error", ""))
            failed.append(assignment)
    return 1 if failed else 0


def _write(summary, settings: JobSettings | None) -> None:
    if settings:
        Path(settings.summary).write_text(json.dumps(asdict(summary)))


def grade(course: Path, assignment: str, student: str) -> int:
    from autograder.outcome import JobSummary

    started = time.perf_counter()
    settings = JobSettings.current()
    os.chdir(course)
    api = _api(course)
    summary = JobSummary(seconds={"import": round(time.perf_counter() - started, 2)})
    mark = time.perf_counter()
    run = api.autograde(assignment, student, force=True, create=True)
    summary.seconds["autograde"] = round(time.perf_counter() - mark, 2)
    print(run.get("log", ""))
    if run.get("error"):
        print(run["error"])
        summary.error = str(run["error"]).strip().splitlines()[-1][:300] if str(run["error"]).strip() else ""
    autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    summary.autograde = bool(run.get("success")) and autograded.exists()
    stopped = Path(settings.state if settings else course / ".grader-state") / "stopped.txt"
    first = stopped.read_text().strip().splitlines()[0] if stopped.exists() and stopped.read_text().strip() else ""
    summary.stop_code, _, summary.stopped = first.partition(" ")
    if autograded.exists():
        from autograder.reports.scrub import Scrubber, sanitize_autograded

        scrub = Scrubber.from_notebooks(course / "source" / assignment / f"{assignment}.ipynb",
                                        course / "release" / assignment / f"{assignment}.ipynb")
        messages, enames = sanitize_autograded(autograded, scrub)
        summary.messages, summary.enames = messages, sorted(enames)
        _write(summary, settings)  # what autograde gave is kept even if feedback generation dies
        if settings and not settings.feedback_pages:
            return 0
        mark = time.perf_counter()
        feedback = api.generate_feedback(assignment, student, force=True)
        summary.seconds["feedback"] = round(time.perf_counter() - mark, 2)
        print(feedback.get("log", ""))
        if feedback.get("error"):
            print(feedback["error"])
        summary.feedback = bool(feedback.get("success"))
    _write(summary, settings)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--generate"]:
        return generate(Path(argv[1]).resolve(), argv[2:])
    return grade(Path(argv[0]).resolve(), argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
