"""The one place that writes nbgrader configuration (``nbgrader_config.py`` files) and kernelspecs.

Three kinds of course folder get a configuration:

- a throwaway course that generates releases (:func:`write_course_config`);
- the private copy a submission is graded in (:class:`Grading`: the probing executor with the
  assignment's hidden tests, the sandboxed kernel, the output caps; the kernel's sockets in the
  channel folder);
- the grader's ``OUT`` folder, an nbgrader course for formgrader and ``nbgrader export``
  (:func:`write_out_config`).

Each is rendered from plain values with ``repr`` (no string templates of Python code).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

COURSE_ID = "course-kit"
NBGRADER_FEEDBACK = "nbgrader_feedback"
"""OUT's folder for nbgrader's own feedback pages (formgrader's buttons); the kit's are in feedback/."""
GRADER_KERNEL = "course-kit-grader"
CODE_STUB = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
TEXT_STUB = "YOUR ANSWER HERE"
AUTOGRADE_PREPROCESSORS = [
    "autograder.grading.executor.ProbeExecute", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "autograder.grading.executor.CapOutput",
    "nbgrader.preprocessors.LimitOutput", "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata",
]


# Every page nbgrader renders (feedback, formgrader) turns written answers into HTML with this
# filter: nbconvert's renderer, then bleach (autograder.reports.safe_markdown). nbconvert's own
# raised on an image whose attachment a notebook lacks, which failed generate_feedback for the
# whole assignment, and kept javascript: links.
MARKDOWN_FILTER = {"markdown2html": "autograder.reports.safe_markdown.markdown2html"}
# ...and cleans every output a notebook made (a <script>, an onerror, JavaScript, an iframe) with
# nbconvert's own sanitizer, the rules formgrader's pages use: a student's page is opened by the
# student, but also by graders and by the instructor, in a browser that holds their sessions
SANITIZED_PAGES = {"HTMLExporter.sanitize_html": True,
                   "HTMLExporter.preprocessors": ["nbconvert.preprocessors.sanitize.SanitizeHTML"]}


def _render(settings: dict[str, object], header: str) -> str:
    lines = [f"# {header}", "c = get_config()  # noqa: F821 (nbgrader's config loader defines it)"]
    lines += [f"c.{name} = {value!r}" for name, value in settings.items()]
    return "\n".join(lines) + "\n"


def course_settings(root: Path, timeout: int) -> dict[str, object]:
    return {
        "CourseDirectory.root": str(root), "CourseDirectory.course_id": COURSE_ID,
        "Execute.timeout": int(timeout), "Execute.interrupt_on_timeout": True,
        "Execute.raise_on_iopub_timeout": False,
        "ClearSolutions.code_stub": CODE_STUB, "ClearSolutions.text_stub": TEXT_STUB,
        "LimitOutput.max_lines": 200, "LimitOutput.max_traceback": 20, "Autograde.create_student": True,
        "HTMLExporter.filters": dict(MARKDOWN_FILTER), **SANITIZED_PAGES,
    }


@dataclass(frozen=True)
class Grading:
    """What a submission's private course needs beyond a throwaway one."""
    tests_dir: Path
    """The assignment's hidden tests (``solutions/<id>/tests``), read by the executor, never the kernel."""
    partial_credit: tuple[str, ...] = ()
    channel: Path | None = None
    """The folder shared with the sandbox: the kernel's connection file and sockets."""
    late: dict = field(default_factory=dict)
    """nbgrader's settings for late work (``grading.late.nbgrader_settings``: the penalty plugin)."""


def grading_settings(grading: Grading) -> dict[str, object]:
    settings = {
        "Execute.kernel_name": GRADER_KERNEL,
        # after a cell's reply, how long its outputs may take to arrive: on loaded cores 10 s was not
        # always enough, and a lost output is a lost error or a lost observations message
        "Execute.iopub_timeout": 60,
        # ZMQ over unix sockets in the channel folder: works across the kernel's network namespace
        "KernelManager.transport": "ipc",
        "ProbeExecute.tests_dir": str(grading.tests_dir),
        "ProbeExecute.partial_credit": list(grading.partial_credit),
        "Autograde.autograde_preprocessors": list(AUTOGRADE_PREPROCESSORS),
    }
    if grading.channel is not None:  # the connection file and sockets live in the folder shared with the sandbox
        settings["KernelManager.connection_file"] = str(Path(grading.channel) / "kernel.json")
        settings["KernelManager.ip"] = str(Path(grading.channel) / "k")
    settings.update(grading.late)
    return settings


def write_course_config(course: Path, timeout: int = 120, grading: Grading | None = None) -> Path:
    """``course/nbgrader_config.py`` for a throwaway course (``grading``: a submission's copy)."""
    settings = course_settings(course, timeout)
    if grading is not None:
        settings.update(grading_settings(grading))
    path = Path(course) / "nbgrader_config.py"
    path.write_text(_render(settings, "Written by the course kit's grader for one throwaway course."))
    return path


def db_url(path: Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def write_out_config(out: Path) -> Path:
    """OUT/nbgrader_config.py: OUT is an nbgrader course (formgrader, ``nbgrader export``)."""
    out = Path(out)
    settings = {
        "CourseDirectory.root": str(out.resolve()), "CourseDirectory.course_id": COURSE_ID,
        "CourseDirectory.db_url": db_url(out / "gradebook.db"),
        # `nbgrader export` here must not replace the autograder's grades.csv
        "ExportPlugin.to": "nbgrader_grades.csv",
        # formgrader's own "Generate Feedback" button writes nbgrader's pages here: it deleted the
        # kit's feedback/ pages and result.json files when it wrote there (`grades` makes the pages)
        "CourseDirectory.feedback_directory": NBGRADER_FEEDBACK,
        "ClearSolutions.code_stub": CODE_STUB, "ClearSolutions.text_stub": TEXT_STUB,
        "HTMLExporter.filters": dict(MARKDOWN_FILTER), **SANITIZED_PAGES,
    }
    path = out / "nbgrader_config.py"
    path.write_text(_render(settings, "Written by `python -m autograder autograde`: OUT is an nbgrader course."))
    return path


def write_kernelspec(jupyter_dir: Path) -> Path:
    """The grading kernelspec: ``autograder.isolation.launcher`` (sandbox per AUTOGRADER_SANDBOX_SPEC),
    then ``autograder.kernel.start_kernel`` (resource limits, the memory watchdog). Put ``jupyter_dir`` on
    JUPYTER_PATH."""
    from autograder.isolation.launcher import kernelspec_argv

    spec = Path(jupyter_dir) / "kernels" / GRADER_KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": kernelspec_argv(), "display_name": "Python 3 (course-kit grader)", "language": "python",
        "interrupt_mode": "signal"}, indent=1))
    return spec
