"""What grading is asked and produces: the :class:`Request` (``autograde``'s options), the batch-wide
:class:`Settings` it becomes, one :class:`Result` per submission.

Plain dataclasses (picklable: they travel to and from Ray workers); no grading logic here.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from pathlib import Path

from helpers import profiles


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


def positive(text: str) -> int:
    """argparse type: an integer of at least 1."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _option(default, flag: str | None, text: str, **argparse_kwargs):
    """A :class:`Request` field; ``flag`` is its ``autograde`` option, whose ``--help`` is ``text``."""
    kind = {"default_factory": default} if default in (dict, tuple) else {"default": default}
    return field(**kind, metadata={"flag": flag, "help": text, "argparse": argparse_kwargs})


@dataclass(frozen=True)
class Request:
    """What the person grading asked for: the ``autograde`` command's options, whose help is each field's
    (:meth:`add_arguments`); :func:`plan` turns it into the :class:`Settings` every submission is graded with."""

    workers: int = _option(1, "--workers", "submissions graded at once on this machine", type=positive)
    profile: str = _option("tiny", "--profile",
                           "profile the notebooks run in while grading (default: full, the real grading; GPU "
                           "assignments then need a GPU. small: real SmolLM2 weights on a CPU. tiny: a dry run on "
                           "CPU. auto: full with a GPU, else tiny)", choices=["auto", *profiles.PROFILES],
                           cli_default="full")
    ray_address: str | None = _option(None, "--ray", "send submissions to this Ray cluster (`auto`, "
                                      "`ray://host:10001`, or `local` for a throwaway local instance)",
                                      metavar="ADDRESS")
    only: tuple = _option(tuple, "--only", "regrade these students only, in an OUT graded before: every other "
                          "result and every written grade is kept; their feedback records the regrade",
                          nargs="+", metavar="STUDENT")
    extensions: dict = _option(dict, "--extensions", "CSV with the columns student,deadline: that student's own "
                               "deadline (ISO 8601), or `waived` for no late penalty; shown on their feedback and in "
                               "both CSVs", metavar="FILE")
    deadline: datetime | str | None = _option(None, "--deadline", "ISO 8601 deadline (UTC unless an offset is "
                                              "given); later submissions (the LMS's time recorded by collect, else "
                                              "the notebook's mtime) are marked late; an LMS late flag (Canvas) "
                                              "counts without it")
    late_penalty: float = _option(0.0, "--late-penalty", "fraction of the autograded points a late submission "
                                  "loses, a flat fraction, not per day (default 0: only marked)", type=float)
    memory_mb: int | None = _option(None, "--memory-mb", "kernel memory limit for every assignment (MiB; default: "
                                    "each manifest's)", type=positive)
    timeout: int | None = _option(None, "--timeout", "per-cell timeout for every assignment (seconds; default: "
                                  "each manifest's)", type=positive)
    sandbox_mode: str | None = _option(None, "--sandbox", "kernel isolation: auto (isolate when the host can; "
                                       "default), required (stop when it cannot), off (no isolation: for trusted "
                                       "notebooks only; default: AUTOGRADER_SANDBOX, else auto)",
                                       choices=["auto", "required", "off"])
    feedback_pages: bool = _option(True, None, "False: result files and the summary page only, without nbgrader's "
                                   "page of the notebook (the mutation tests)")

    @classmethod
    def add_arguments(cls, parser) -> None:
        """One option per field that has a flag, its help and choices taken from the field."""
        for item in fields(cls):
            flag = item.metadata.get("flag")
            if flag is None:
                continue
            kwargs = dict(item.metadata["argparse"])
            default = kwargs.pop("cli_default", None if item.default_factory is not MISSING else item.default)
            parser.add_argument(flag, dest=item.name, default=default, help=item.metadata["help"], **kwargs)

    @classmethod
    def from_args(cls, args) -> Request:
        """The request the parsed options make (``--extensions`` read from its file)."""
        from autograder.grading.late import read_extensions

        values = {item.name: getattr(args, item.name) for item in fields(cls) if item.metadata.get("flag")}
        values["extensions"] = read_extensions(Path(values["extensions"])) if values["extensions"] else {}
        values["only"] = tuple(values["only"] or ())
        return cls(**values)
