"""The grading kernel: resource limits, a memory watchdog, then ipykernel.

    python -m autograder.kernel.start_kernel -f CONNECTION_FILE

Settings come from the environment the grader gives nbgrader (inherited by the kernel):

- ``AUTOGRADER_MEMORY_MB``: memory limit for the kernel. A watchdog kills the kernel and everything
  it started when their resident memory together passes it (in a sandbox the launcher outside runs
  it, ``AUTOGRADER_TREE_WATCHED``; unsandboxed, a process the kernel starts); on a CPU grader
  ``RLIMIT_AS`` also bounds each process (an allocation past it raises ``MemoryError`` in the
  cell), which ``AUTOGRADER_MEMORY_MODE=rss`` leaves out (GPU grading: CUDA reserves huge address
  ranges). Both write a marker into ``AUTOGRADER_STATE_DIR`` so the grader can name the limit in
  the feedback.

Nothing here polices the notebook: the kernel only runs code and reports observations
(``autograder.kernel.probe``); the sandbox around it is the security boundary.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

WATCHED_OUTSIDE = "AUTOGRADER_TREE_WATCHED"


def _mark(name: str, text: str) -> None:
    state = os.environ.get("AUTOGRADER_STATE_DIR")
    if state:
        try:
            Path(state).mkdir(parents=True, exist_ok=True)
            (Path(state) / name).write_text(text)
        except OSError:
            pass


def watch_tree(pid: int, limit_mb: int, mark: Callable[[str], None], interval: float = 0.2) -> None:
    """Kill ``pid`` and everything under it when their resident memory together passes ``limit_mb``
    (a kernel and two forked children each under RLIMIT_AS held 4,284 MB against 3,072); returns when
    the tree has ended."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    limit = limit_mb * 1024 * 1024
    while True:
        try:
            if not root.is_running() or root.status() == psutil.STATUS_ZOMBIE:
                return
            procs = [root, *(p for p in root.children(recursive=True) if p.pid != os.getpid())]
        except psutil.NoSuchProcess:
            return
        rss = 0
        for proc in procs:
            try:
                rss += proc.memory_info().rss
            except psutil.Error:
                pass
        if rss > limit:
            mark(f"resident memory {rss / 2**20:.0f} MiB passed the {limit_mb} MiB limit")
            for proc in reversed(procs):
                try:
                    proc.kill()
                except psutil.Error:
                    pass
            return
        time.sleep(interval)


def apply_limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit_mb = int(os.environ.get("AUTOGRADER_MEMORY_MB", "0") or 0)
    if limit_mb <= 0:
        return
    if not os.environ.get(WATCHED_OUTSIDE):  # started first, so RLIMIT_AS does not bind it
        subprocess.Popen([sys.executable, "-m", "autograder.kernel.start_kernel", "--watch", str(os.getpid()),
                          str(limit_mb)], stdin=subprocess.DEVNULL, close_fds=True)
    if os.environ.get("AUTOGRADER_MEMORY_MODE", "as") == "as":  # a MemoryError in the cell, per process
        limit = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--watch"]:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # kernel interrupts go to the whole group
        watch_tree(int(argv[1]), int(argv[2]), lambda text: _mark("memory", text))
        return 0
    apply_limits()
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(["--HistoryManager.hist_file=:memory:", *argv])
    from autograder.kernel.probe import remember_pristine

    remember_pristine()  # builtins and numpy as they start, lent back to the probes (honest mistakes only)
    # the notebook's folder is importable, but after the installed packages (no shadowing numpy)
    sys.path.append(os.getcwd())
    app.start()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
