"""What grading produces: one :class:`Result` per submission, the batch-wide :class:`Settings`.

Plain dataclasses (picklable: they travel to and from Ray workers); no grading logic here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


class SubmissionLayoutError(ValueError):
    """The submissions folder is not ``<student>/<assignment>/<files>``."""


@dataclass
class Result:
    student: str
    assignment: str
    score: float = 0.0
    """Points earned on autograded cells (before any late penalty: see ``late_penalty``)."""
    max_score: float = 0.0
    """Autograded points available."""
    manual_max: float = 0.0
    """Points in manually graded answer cells (graded by a person in formgrader)."""
    status: str = "ok"
    """ok | failed-tests | timeout | out-of-memory | crashed | invalid | missing | no-gpu |
    wrong-profile"""
    seconds: float = 0.0
    cells: dict = field(default_factory=dict)
    """grade_id -> [score, max_score] for the autograded cells."""
    feedback: list = field(default_factory=list)
    """One line per failed check or repaired problem, safe to show the student."""
    late: bool = False
    submitted_at: str = ""
    """ISO time the submission was made, from the LMS's own metadata when collect recorded it."""
    cell_messages: dict = field(default_factory=dict)
    """grade_id -> why that test failed (the check's message), for feedback and Gradescope."""
    timestamp_source: str = ""
    """Where ``submitted_at`` / ``late`` came from (e.g. "canvas _late flag", "file mtime")."""
    manual_score: float | None = None
    """Points of the written answers (a person's in formgrader, 0 for a blank one; None while one is open)."""
    open_answers: list = field(default_factory=list)
    """grade_ids of the written answers a person has yet to grade (nbgrader shows them as scoring 0)."""
    late_penalty: float = 0.0
    """Points deducted for lateness, as nbgrader's late-submission plugin recorded them in the gradebook."""
    measurements: dict = field(default_factory=dict)
    """Grader-side measurements (e.g. held-out format adherence), never set by the kernel."""
    isolation: str = ""
    """How the kernel was isolated: "bubblewrap, own uid", "bubblewrap, grader's uid", or "none (...)"."""
    timings: dict = field(default_factory=dict)
    """Seconds per grading stage (workspace, intake, measure, job: import/autograde/feedback, score,
    report): where a submission's time goes (bench/bench_autograde.py prints them)."""


@dataclass
class Settings:
    """Batch-wide grading options (picklable: they travel to Ray workers)."""
    profile: str = "tiny"
    deadline: datetime | None = None
    late_penalty: float = 0.0
    """Fraction of the score deducted from late submissions (0: only marked late)."""
    memory_mb: int | None = None
    """Override every assignment's kernel memory limit."""
    timeout: int | None = None
    """Override every assignment's per-cell timeout (seconds)."""
    gpus: int = 0
    """GPUs on this grader (detected by ``autograde``)."""
    sandbox: str = "auto"
    """auto (isolate when the host can, else say so once) | required | off."""
    kernel_threads: int = 0
    """CPU threads per kernel for torch/numpy (0: the libraries' default, one per core)."""
    feedback_pages: bool = True
    """nbgrader's feedback page per submission (off only where nobody reads them: the mutation tests)."""
    lms: dict = field(default_factory=dict)
    """student folder -> LMS metadata recorded by ``collect`` (name, user id, lateness)."""
    extensions: dict = field(default_factory=dict)
    """student folder -> their own ISO deadline or "waived" (``--extensions``)."""
    regrades: dict = field(default_factory=dict)
    """"student/assignment" -> the autograded score before this regrade (``--only``)."""


@dataclass
class Outcome:
    """What grading one submission gives the batch: the result, and the submission's gradebook
    entry (scores and comments, merged into OUT/gradebook.db; None when nothing was graded)."""
    result: Result
    record: dict | None = None


@dataclass
class JobSummary:
    """What ``autograder.grading.job`` (nbgrader autograde + feedback, run as the grader) reports,
    as a JSON file the grader reads; a missing file means the job was killed."""
    autograde: bool = False
    """nbgrader produced the autograded notebook."""
    feedback: bool = False
    """nbgrader produced the feedback page."""
    messages: dict = field(default_factory=dict)
    """test cell grade_id -> its failure message (scrubbed of hidden lines)."""
    enames: list = field(default_factory=list)
    """Names of the errors seen in any cell (CellTimeoutError, DeadKernelError, MemoryError...)."""
    stopped: str = ""
    """Why the executor stopped running cells early ('' when every cell ran), for people."""
    stop_code: str = ""
    """The same as a code ``status.decide`` reads: ``notebook-timeout``, ``cell-timeout``, ``dead-kernel``
    or '' (every cell ran)."""
    seconds: dict = field(default_factory=dict)
    error: str = ""
    """nbgrader's own error line when autograde failed."""
