"""One submission's nbgrader work in one process: autograde, hide hidden tests, generate feedback.

    python -m autograder.grading.job COURSE ASSIGNMENT STUDENT
    python -m autograder.grading.job --generate COURSE ASSIGNMENT...

Runs inside the private course copy (``grade.grade_one`` starts it and kills its whole process
tree past the assignment's wall-clock limit). It runs as the grader: only the kernel it starts is
sandboxed (see ``sandbox``). Importing nbgrader once instead of once per
command saves seconds per submission. Prints nbgrader's log; the last line is a JSON summary.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def generate(course: Path, assignment_ids: list[str]) -> int:
    """``nbgrader generate_assignment`` for several assignments in one process."""
    os.chdir(course)
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    failed = []
    for assignment in assignment_ids:
        run = api.generate_assignment(assignment, force=True)
        print(run.get("log", ""))
        if not run.get("success"):
            print(run.get("error", ""))
            failed.append(assignment)
    print("AUTOGRADER-JOB " + json.dumps({"failed": failed}))
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--generate"]:
        return generate(Path(argv[1]).resolve(), argv[2:])
    import time

    started = time.perf_counter()
    course, assignment, student = Path(argv[0]).resolve(), argv[1], argv[2]
    os.chdir(course)
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    api = NbGraderAPI(config=config)
    summary = {"autograde": False, "feedback": False, "seconds": {"import": round(time.perf_counter() - started, 2)}}
    mark = time.perf_counter()
    run = api.autograde(assignment, student, force=True, create=True)
    summary["seconds"]["autograde"] = round(time.perf_counter() - mark, 2)
    print(run.get("log", ""))
    if run.get("error"):
        print(run["error"])
    autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    summary["autograde"] = bool(run.get("success")) and autograded.exists()
    if autograded.exists():
        from autograder.reports.scrub import Scrubber, sanitize_autograded

        scrub = Scrubber.from_notebooks(course / "source" / assignment / f"{assignment}.ipynb",
                                        course / "release" / assignment / f"{assignment}.ipynb")
        messages, enames = sanitize_autograded(autograded, scrub)
        summary.update(messages=messages, enames=sorted(enames))
        mark = time.perf_counter()
        feedback = api.generate_feedback(assignment, student, force=True)
        summary["seconds"]["feedback"] = round(time.perf_counter() - mark, 2)
        print(feedback.get("log", ""))
        if feedback.get("error"):
            print(feedback["error"])
        summary["feedback"] = bool(feedback.get("success"))
    print("AUTOGRADER-JOB " + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
