"""Which isolation this host gives, found out once per process by starting a tiny sandbox.

- ``root``: the grader runs as root; each sandbox gets its own uid (``UID_BASE`` + n).
- ``user``: no root, but unprivileged user namespaces work: the sandbox keeps the grader's uid
  outside (inside it has no capability and sees none of the grader's files but what is bound).
- ``none``: no bubblewrap can run here (Colab, macOS, a container without the rights): kernels run
  in their own session with the allowlisted environment and nothing else; the batch says so once
  (a notebook can then read the hidden tests' expected values: grade for real on a host with
  bubblewrap).

``AUTOGRADER_SANDBOX`` (or ``autograde --sandbox``): ``off`` forces ``none``, ``required`` stops
the batch when isolation is unavailable, ``root``/``user`` force one mode (tests).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder.isolation.spec import UID_BASE, Spec


class SandboxError(RuntimeError):
    pass


@dataclass(frozen=True)
class Isolation:
    mode: str
    """root | user | none"""
    reason: str = ""

    @property
    def isolated(self) -> bool:
        return self.mode in ("root", "user")

    def describe(self) -> str:
        if self.mode == "root":
            return "bubblewrap, own uid"
        if self.mode == "user":
            return "bubblewrap, grader's uid"
        return f"none ({self.reason})" if self.reason else "none"


_probed: dict = {}
_lock = threading.Lock()
_uid_lock = threading.Lock()
_uid_counter = [0]


UID_BLOCK = 200
"""Sandbox uids one grader process (and the jobs it forks) uses in turn."""
UID_BLOCKS = 5000
_block: list = []


def uid_block() -> range:
    """This grader's uids: a block no other live grader on this host holds. Each block has a lock
    file; a grader holds the lock of the first free one for as long as it (or a process it forked)
    lives, so two teaching assistants grading on one machine never share a uid, and ending one
    grader's sandbox (every process of its uid) never touches the other's kernels."""
    import fcntl

    with _uid_lock:
        if not _block:
            folder = Path("/tmp/course-kit-uid-blocks")  # one place for every grader, whatever its TMPDIR
            folder.mkdir(mode=0o755, exist_ok=True)
            for i in range(UID_BLOCKS):
                number = (os.getpid() + i) % UID_BLOCKS
                fd = os.open(folder / f"{number}.lock", os.O_CREAT | os.O_RDWR, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                _block.extend((number, fd))  # the descriptor stays open: the lock lives with us
                break
            else:
                raise SandboxError(f"all {UID_BLOCKS} sandbox uid blocks are held by other graders on this host")
        start = UID_BASE + _block[0] * UID_BLOCK
        return range(start, start + UID_BLOCK)


def next_uid() -> int:
    """A uid no other sandbox of this grader, or of another grader on this host, uses at the same time."""
    block = uid_block()
    with _uid_lock:
        _uid_counter[0] += 1
        return block[_uid_counter[0] % UID_BLOCK]


def probe(requested: str | None = None) -> Isolation:
    """The isolation to use (tried for real once per process and mode, ~0.1 s)."""
    requested = (requested or os.environ.get("AUTOGRADER_SANDBOX") or "auto").lower()
    if requested in ("off", "none", "0", "false"):
        return Isolation("none", "switched off (--sandbox off)")
    only = requested if requested in ("root", "user") else None
    with _lock:
        if only not in _probed:
            _probed[only] = _try_modes(only)
    found = _probed[only]
    if requested == "required" and not found.isolated:
        raise SandboxError(f"kernel isolation is required but unavailable here: {found.reason}")
    return found


def _try_modes(only: str | None) -> Isolation:
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"{sys.platform} has no Linux namespaces")
    modes = [only] if only else (["root"] if os.geteuid() == 0 else []) + ["user"]
    reasons = []
    for mode in modes:
        reason = _try(mode)
        if not reason:
            return Isolation(mode)
        reasons.append(f"{mode}: {reason}")
    return Isolation("none", "; ".join(reasons))


def _try(mode: str) -> str:
    """'' when a sandbox of ``mode`` runs a command as pid 2 with the expected uid, else why not."""
    from autograder.isolation.launcher import LAUNCH_BOOT

    if mode == "root" and os.geteuid() != 0:
        return "the grader is not root"
    channel = Path(tempfile.mkdtemp(prefix="agp-"))
    uid = next_uid() if mode == "root" else os.getuid()
    try:
        if mode == "root":
            os.chown(channel, uid, uid)
        spec = Spec(mode=mode, channel=str(channel), uid=uid, disk_mb=16, workdir="/home/student/probe",
                    argv=[sys.executable, "-I", "-c", "import os; print('isolated', os.getpid(), os.getuid())"])
        run = subprocess.run([sys.executable, "-I", "-c", LAUNCH_BOOT, "--spec", str(spec.write(channel))],
                             capture_output=True, text=True, timeout=60, cwd="/")
        if run.stdout.split() == ["isolated", "2", str(uid)]:
            return ""
        return ((run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1])[:200]
    except Exception as error:  # noqa: BLE001 - any failure means this mode is unavailable
        return f"{type(error).__name__}: {error}"[:200]
    finally:
        shutil.rmtree(channel, ignore_errors=True)
