"""Ending processes: the one place the grader kills a process tree or a sandbox user's processes."""
from __future__ import annotations

import os
import signal


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
