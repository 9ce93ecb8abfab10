"""Ending processes: the one place the grader kills a process tree or a sandbox user's processes."""
from __future__ import annotations

import os
import signal
import time


def kill_tree(pid: int, include_root: bool = True) -> int:
    """SIGKILL ``pid``'s descendants (children first found, then killed bottom-up) and ``pid``
    itself; returns how many were signalled. A process that already exited is skipped."""
    killed = 0
    try:
        import psutil

        root = psutil.Process(pid)
        for child in reversed(root.children(recursive=True)):
            try:
                child.kill()
                killed += 1
            except psutil.Error:
                pass
    except Exception:  # noqa: BLE001 - no psutil, or the root is gone: kill what we can
        pass
    if include_root:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def kill_uid(uid: int) -> int:
    """SIGKILL every process whose real uid is ``uid`` (a sandbox user in root mode)."""
    try:
        import psutil
    except ImportError:
        return 0
    killed = 0
    for proc in psutil.process_iter(["uids"]):
        try:
            if proc.info["uids"] and proc.info["uids"].real == uid:
                proc.kill()
                killed += 1
        except (psutil.Error, OSError):
            pass
    return killed


def kill_marked(variable: str, value: str) -> int:
    """SIGKILL every process (but this one) whose environment has ``variable=value``: what an
    unsandboxed kernel left behind carries the marker the grader gave it."""
    try:
        import psutil
    except ImportError:
        return 0
    killed, me = 0, os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.info["pid"] == me:
            continue
        try:
            if proc.environ().get(variable) == value:
                proc.kill()
                killed += 1
        except (psutil.Error, OSError):
            pass
    return killed


def resident_mb(pid: int) -> float:
    """The resident memory of ``pid`` alone (not its children) in MiB; 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_bounded(pid: int, exit_code, timeout: float, memory_mb: int, poll: float = 0.05) -> tuple[int | None, str]:
    """Wait for ``pid`` (``exit_code()`` returns its exit status once it ended, else None): (status, ""), or
    (None, "timeout") past ``timeout`` s, or (None, "memory") once the process itself holds more than ``memory_mb``
    MiB; in both cases its whole tree is killed first. The process's children (a sandboxed kernel, an evaluator)
    have limits of their own: this one bounds what the grading job's own process may take."""
    deadline = time.monotonic() + timeout
    while True:
        code = exit_code()
        if code is not None:
            return code, ""
        over = "timeout" if time.monotonic() > deadline else "memory" if 0 < memory_mb < resident_mb(pid) else ""
        if over:
            kill_tree(pid)
            return None, over
        time.sleep(poll)
