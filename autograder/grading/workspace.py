"""One submission's private workspace: a course copy only the grader can read, the channel folder
the sandboxed kernel shares with it, the sandbox's uid, and the cleanup of all of it.

The course copy (``source/`` with the hidden tests, ``release/``, the gradebook) lives in the
batch's private work folder; the channel is a short folder under /tmp (unix socket paths are
limited to ~107 bytes) that the sandbox sees at ``/run/kernel``. Everything here is removed when
the submission is done, and in root mode every process left running as the sandbox's uid is
killed (normally there is none: the sandbox ended them).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.kernel_env import KERNEL_MARK
from autograder.isolation import processes
from autograder.isolation.host_isolation import Isolation, next_uid


def safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _short_tmp() -> str:
    default = tempfile.gettempdir()
    return default if len(default) < 40 else "/tmp"


@dataclass
class Workspace:
    course: Path
    """The private course copy (source, release, gradebook, config, kernelspec)."""
    channel: Path
    """Shared with the sandbox: sockets, connection file, kernel-state/."""
    isolation: Isolation
    uid: int | None = None
    """The sandbox's uid in root mode (None otherwise)."""
    paths: dict = field(default_factory=dict)
    """Host path -> label, for feedback lines that must not show the grader's folders."""

    @classmethod
    def create(cls, template: Path, workdir: Path, student: str, assignment_id: str,
               isolation: Isolation) -> Workspace:
        course = Path(tempfile.mkdtemp(prefix=f"{safe_id(student)[:40]}--{assignment_id}-", dir=workdir))
        shutil.copytree(template, course, dirs_exist_ok=True)
        channel = Path(tempfile.mkdtemp(prefix="agk-", dir=_short_tmp()))
        (channel / "kernel-state").mkdir()
        uid = next_uid() if isolation.mode == "root" else None
        if uid is not None:  # the sandbox user writes its sockets and state here
            for path in (channel, channel / "kernel-state"):
                os.chown(path, uid, uid)
        return cls(course, channel, isolation, uid, {str(course): "<grading folder>",
                                                     str(channel): "<kernel channel>"})

    @property
    def state(self) -> Path:
        """The grader's own notes about this run (progress, why the job stopped, measurement requests, job summary)."""
        path = self.course / ".grader-state"
        path.mkdir(exist_ok=True)
        return path

    @property
    def kernel_state(self) -> Path:
        return self.channel / "kernel-state"

    def submitted(self, student: str, assignment_id: str) -> Path:
        return self.course / "submitted" / student / assignment_id

    def cleanup(self) -> None:
        if self.uid is not None:
            processes.kill_uid(self.uid)
        if not self.isolation.isolated:  # an unsandboxed kernel's leftovers carry its state folder
            processes.kill_marked(KERNEL_MARK, str(self.kernel_state))
        if not os.environ.get("AUTOGRADER_KEEP_COURSES"):  # debugging: keep the private course copies
            shutil.rmtree(self.course, ignore_errors=True)
            shutil.rmtree(self.channel, ignore_errors=True)
