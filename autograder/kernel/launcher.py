"""The grading kernel: resource limits, a memory watchdog, then ipykernel with the guard.

    python -m autograder.kernel.launcher -f CONNECTION_FILE

Settings come from the environment the grader gives nbgrader (inherited by the kernel):

- ``AUTOGRADER_MEMORY_MB``: memory limit for the kernel. On a CPU grader it is enforced with
  ``RLIMIT_AS`` (an allocation past it raises ``MemoryError`` in the cell); with
  ``AUTOGRADER_MEMORY_MODE=rss`` (GPU grading: CUDA reserves huge address ranges) a watchdog
  process kills the kernel when its resident memory passes the limit. Both write a marker
  into ``AUTOGRADER_STATE_DIR`` so the grader can name the limit in the feedback.
- ``AUTOGRADER_GUARD_MODULES``: modules whose pristine state the guard records.
- ``AUTOGRADER_GUARD_KEYFILE``: a file holding the key the grader's executor checks the guard's
  replies with. It is read and deleted here, before the notebook's first cell, and the guard is
  sealed (``kernel_guard.seal``). Without it (a kernel started by hand) the guard stays unsealed.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _mark(name: str, text: str) -> None:
    state = os.environ.get("AUTOGRADER_STATE_DIR")
    if state:
        try:
            Path(state).mkdir(parents=True, exist_ok=True)
            (Path(state) / name).write_text(text)
        except OSError:
            pass


def watch(pid: int, limit_mb: int, interval: float = 0.1) -> int:
    """Kill ``pid`` (and its children) when their resident memory together passes ``limit_mb``."""
    import psutil

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # kernel interrupts go to the whole group
    try:
        kernel = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return 0
    limit = limit_mb * 1024 * 1024
    while True:
        try:
            if not kernel.is_running() or kernel.status() == psutil.STATUS_ZOMBIE:
                return 0
            procs = [kernel, *kernel.children(recursive=True)]
            rss = 0
            for proc in procs:
                try:
                    rss += proc.memory_info().rss
                except psutil.Error:
                    pass
            if rss > limit:
                _mark("memory", f"resident memory {rss / 2**20:.0f} MiB passed the {limit_mb} MiB limit")
                for proc in reversed(procs):
                    try:
                        proc.kill()
                    except psutil.Error:
                        pass
                return 0
        except psutil.NoSuchProcess:
            return 0
        time.sleep(interval)


def apply_limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit_mb = int(os.environ.get("AUTOGRADER_MEMORY_MB", "0") or 0)
    if limit_mb <= 0:
        return
    if os.environ.get("AUTOGRADER_MEMORY_MODE", "as") == "as":
        limit = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    else:
        subprocess.Popen([sys.executable, "-m", "autograder.kernel.launcher", "--watch", str(os.getpid()),
                          str(limit_mb)], stdin=subprocess.DEVNULL, close_fds=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--watch"]:
        return watch(int(argv[1]), int(argv[2]))
    apply_limits()
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(["--HistoryManager.hist_file=:memory:", *argv])
    from autograder.kernel import guard as kernel_guard

    try:  # imported lazily by pyzmq on the first large message: load it now so the guard knows its code
        import zmq.utils.garbage  # noqa: F401
    except ImportError:
        pass
    kernel_guard.install(app.shell)
    keyfile = os.environ.pop("AUTOGRADER_GUARD_KEYFILE", "")
    if keyfile:
        key = Path(keyfile).read_bytes().strip()
        os.unlink(keyfile)
        kernel_guard.seal(key, shell=app.shell, kernel=app.kernel)
        del key
    # the notebook's folder is importable, but after the installed packages (no shadowing numpy)
    sys.path.append(os.getcwd())
    app.start()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
