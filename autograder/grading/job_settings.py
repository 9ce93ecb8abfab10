"""What one nbgrader job is told: :class:`JobSettings`, written by the grader, read by the job.

The grader writes one settings file per submission (mode 0600, in the submission's state folder,
which the sandboxed kernel never sees) and names it in the job's environment (``AUTOGRADER_JOB``),
as it names the sandbox's :class:`~autograder.isolation.spec.Spec` in ``AUTOGRADER_SANDBOX_SPEC``.
``autograder.grading.job`` and the executor it runs read it; nothing reaches the kernel.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

JOB_VARIABLE = "AUTOGRADER_JOB"
JOB_MEMORY_MB = 4096
"""What the grading job's own process (nbgrader and the judges, never the kernel) may hold; a job past it is
killed and its submission scores 0. ``COURSE_GRADER_JOB_MB`` overrides it."""


@dataclass(frozen=True)
class JobSettings:
    state: str
    """The grader's state folder for this submission: ``stopped.txt`` and the executor's notes."""
    summary: str
    """Where the job writes its :class:`~autograder.outcome.JobSummary` (JSON)."""
    deadline: float | None = None
    """Wall-clock time (``time.time()``) by which the whole notebook must have run; None: no limit."""
    measurement: dict | None = None
    """The evaluator's measurement, handed to the tier cells' judge (``check.measurement``); never to the kernel."""
    feedback_pages: bool = True
    """Whether the job also generates the feedback page."""
    task_sandbox: str = "none"
    """The isolation mode the student's task functions run apart in (``grading.task_process``)."""
    task_uid: int | None = None
    """Their own uid in root mode (the grader's counter gives it: a job's own would repeat the kernel's)."""

    def write(self, folder: str | Path) -> Path:
        path = Path(folder) / "job-settings.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(asdict(self), handle)
        return path

    @classmethod
    def current(cls) -> JobSettings | None:
        """The settings of the job this process runs; None outside a grader's job (plain nbgrader, ``generate``)."""
        path = os.environ.get(JOB_VARIABLE)
        return cls(**json.loads(Path(path).read_text())) if path else None
