"""The one place that writes nbgrader configuration (``nbgrader_config.py`` files) and kernelspecs.

Three kinds of course folder get a configuration:

- a throwaway course that generates releases (:func:`write_course_config`);
- the private copy a submission is graded in (``grading=True``: the guarded executor, the
  sandboxed kernel, the output caps; the kernel's sockets in the channel folder);
- the grader's ``OUT`` folder, an nbgrader course for formgrader and ``nbgrader export``
  (:func:`write_out_config`).

Each is rendered from plain values with ``repr`` (no string templates of Python code).
"""
from __future__ import annotations

import json
from pathlib import Path

COURSE_ID = "course-kit"
GRADER_KERNEL = "course-kit-grader"
CODE_STUB = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
TEXT_STUB = "YOUR ANSWER HERE"
AUTOGRADE_PREPROCESSORS = [
    "autograder.grading.executor.GuardedExecute", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "autograder.grading.executor.CapOutput",
    "nbgrader.preprocessors.LimitOutput", "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata",
]


# Every page nbgrader renders (feedback, formgrader) turns written answers into HTML with this
# filter: nbconvert's renderer, then bleach (autograder.reports.safe_markdown). nbconvert's own
# raised on an image whose attachment a notebook lacks, which failed generate_feedback for the
# whole assignment, and kept javascript: links.
MARKDOWN_FILTER = {"markdown2html": "autograder.reports.safe_markdown.markdown2html"}


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
        "HTMLExporter.filters": dict(MARKDOWN_FILTER),
    }


def grading_settings(guard: bool, channel: Path | None) -> dict[str, object]:
    settings = {
        "Execute.kernel_name": GRADER_KERNEL,
        # after a cell's reply, how long its outputs may take to arrive: on loaded cores 10 s was not
        # always enough, and a lost output is a lost error (a failing check scored as passing) or a
        # lost guard reply (a correct check marked as tampering); GuardedExecute also backs errors up
        "Execute.iopub_timeout": 60,
        # ZMQ over unix sockets in the channel folder: works across the kernel's network namespace
        "KernelManager.transport": "ipc",
        "GuardedExecute.guard": bool(guard),
        "Autograde.autograde_preprocessors": list(AUTOGRADE_PREPROCESSORS),
    }
    if channel is not None:  # the connection file and sockets live in the folder shared with the sandbox
        settings["KernelManager.connection_file"] = str(Path(channel) / "kernel.json")
        settings["KernelManager.ip"] = str(Path(channel) / "k")
    return settings


def late_settings(fraction: float) -> dict[str, object]:
    """nbgrader's ``AssignLatePenalties`` (an autograde preprocessor) asks this plugin for the
    penalty of a late notebook: ``fraction`` of its autograded score (``--late-penalty``; see
    ``autograder.grading.late``). With 0 nbgrader's own default plugin stays: nothing deducted."""
    if not fraction:
        return {}
    return {"AssignLatePenalties.plugin_class": "autograder.grading.late.FractionPenalty",
            "FractionPenalty.fraction": float(fraction)}


def write_course_config(course: Path, timeout: int = 120, grading: bool = False, guard: bool = True,
                        channel: Path | None = None, late_penalty: float = 0.0) -> Path:
    """``course/nbgrader_config.py`` for a throwaway course (``grading``: a submission's copy)."""
    settings = course_settings(course, timeout)
    if grading:
        settings.update(grading_settings(guard, channel))
        settings.update(late_settings(late_penalty))
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
        "ClearSolutions.code_stub": CODE_STUB, "ClearSolutions.text_stub": TEXT_STUB,
        "HTMLExporter.filters": dict(MARKDOWN_FILTER),
    }
    path = out / "nbgrader_config.py"
    path.write_text(_render(settings, "Written by `python -m autograder autograde`: OUT is an nbgrader course."))
    return path


def write_kernelspec(jupyter_dir: Path) -> Path:
    """The grading kernelspec: ``autograder.isolation.launcher`` (sandbox per AUTOGRADER_SANDBOX_SPEC),
    then ``autograder.kernel.launcher`` (limits, guard). Put ``jupyter_dir`` on JUPYTER_PATH."""
    from autograder.isolation.launcher import kernelspec_argv

    spec = Path(jupyter_dir) / "kernels" / GRADER_KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": kernelspec_argv(), "display_name": "Python 3 (course-kit grader)", "language": "python",
        "interrupt_mode": "signal"}, indent=1))
    return spec
