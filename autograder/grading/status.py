"""A submission's status and the feedback line that explains it, decided from facts only.

The facts: the job's :class:`~autograder.outcome.JobSummary` (or its absence: the job was
killed), the kernel's state folder (a memory marker), and the artifact check.
Never from log text. In order of precedence:

=================  ============================================================================
``timeout``        a cell passed the per-cell limit, or the notebook its whole-notebook limit
                   (points earned before are kept)
``out-of-memory``  the kernel passed its memory limit (a ``MemoryError`` or the watchdog's mark)
``crashed``        the kernel died, or the grading job ended without a summary or past its own memory budget
``wrong-profile``  an artifact was trained in the other profile (tier cells score 0)
``failed-tests``   some autograded points were lost
``ok``             full autograded points
=================  ============================================================================
(``invalid``, ``missing`` and ``no-gpu`` are decided earlier, before anything runs.)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.outcome import JobSummary

MEMORY_ERRORS = {"MemoryError", "OutOfMemoryError"}


@dataclass(frozen=True)
class Facts:
    summary: JobSummary | None
    """None: the job left no summary (killed at the hard limit, or by something it started)."""
    hard_timeout: bool
    """The job was killed at the notebook's hard time limit."""
    grader_memory: bool
    """The job's own process (the judges, never the kernel) passed the grader's memory budget and was killed."""
    memory_marked: bool
    """The kernel's watchdog or the sandbox's cgroup recorded passing the memory limit."""
    mismatch: str | None
    """The artifact check's wrong-profile line, if any."""
    cell_timeout: int
    notebook_timeout: int
    memory_mb: int


def memory_marked(kernel_state: Path) -> bool:
    return (Path(kernel_state) / "memory").exists()


def decide(facts: Facts, score: float, max_score: float) -> tuple[str, list[str]]:
    """(status, feedback lines saying why)."""
    summary = facts.summary
    enames = set(summary.enames) if summary else set()
    if facts.grader_memory:
        return "crashed", ["judging this notebook's results needed more memory than the grader allows (a result far "
                           "larger than any check asks for): the submission scores 0; tell the course staff if "
                           "that looks wrong"]
    if facts.hard_timeout or (summary is not None and summary.stop_code == "notebook-timeout"):
        return "timeout", [f"grading stopped at the {facts.notebook_timeout} s limit for the whole notebook; "
                           "later cells did not run (points earned before are kept)"]
    if "CellTimeoutError" in enames:
        return "timeout", [f"a cell ran past the {facts.cell_timeout} s per-cell limit and was interrupted; "
                           "later cells did not run (points earned before are kept)"]
    if facts.memory_marked or enames & MEMORY_ERRORS:
        died = "DeadKernelError" in enames or summary is None
        return "out-of-memory", [f"the notebook needed more than the {facts.memory_mb} MiB memory limit"
                                 + ("; the kernel was stopped there" if died else "")]
    if summary is None:
        return "crashed", ["the grading job ended without a result (its process was killed); points recorded "
                           "before that are kept"]
    if "DeadKernelError" in enames:
        return "crashed", ["the Python kernel died while running the notebook (os._exit, a killed process or a "
                           "crash in native code); later cells did not run (points earned before are kept)"]
    if not summary.autograde:
        return "crashed", [f"the notebook could not be graded: {summary.error or 'nbgrader produced no output'}"]
    if facts.mismatch:
        return "wrong-profile", []
    return ("ok" if score >= max_score else "failed-tests"), []
