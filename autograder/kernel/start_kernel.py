"""The grading kernel: resource limits, a memory watchdog, then ipykernel.

    python -m autograder.kernel.start_kernel [--memory-mb N --memory-mode as|rss --state-dir DIR
                                              --watched] -f CONNECTION_FILE

The limit options come first; the launcher (``autograder.isolation.launcher``) derives them from
the sandbox's spec file, which the kernel itself never sees (an evaluator worker takes the same
options). :class:`KernelLimits`:

- ``--memory-mb``: memory limit for the kernel. A watchdog kills the kernel and everything it
  started when their resident memory together passes it (in a sandbox the launcher outside runs
  it, ``--watched``; unsandboxed, a process the kernel starts); on a CPU grader ``RLIMIT_AS`` also
  bounds each process (an allocation past it raises ``MemoryError`` in the cell), which
  ``--memory-mode rss`` leaves out (GPU grading: CUDA reserves huge address ranges). Both write a
  marker into ``--state-dir`` so the grader can name the limit in the feedback.

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
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KernelLimits:
    memory_mb: int = 0
    """Memory limit of the kernel and everything it starts; 0: none."""
    memory_mode: str = "as"
    """``as``: also RLIMIT_AS per process (a MemoryError in the cell); ``rss``: the watchdog only (GPU)."""
    state_dir: str = ""
    """Where a limit that was hit leaves its marker for the grader; empty: nowhere."""
    watched: bool = False
    """The launcher outside the sandbox watches the tree's memory: no watchdog of our own."""

    def options(self) -> list[str]:
        """The command-line options that give these limits to :func:`main` (or an evaluator worker)."""
        return ["--memory-mb", str(self.memory_mb), "--memory-mode", self.memory_mode, "--state-dir", self.state_dir,
                *(["--watched"] if self.watched else [])]


def split_limits(argv: list[str]) -> tuple[KernelLimits, list[str]]:
    """The limit options at the front of ``argv`` and the rest (ipykernel's or a worker's arguments)."""
    values, rest = {}, list(argv)
    names = {"--memory-mb": "memory_mb", "--memory-mode": "memory_mode", "--state-dir": "state_dir"}
    while rest and (rest[0] in names or rest[0] == "--watched"):
        option = rest.pop(0)
        if option == "--watched":
            values["watched"] = True
        else:
            values[names[option]] = rest.pop(0)
    if "memory_mb" in values:
        values["memory_mb"] = int(values["memory_mb"] or 0)
    return KernelLimits(**values), rest


def marker(limits: KernelLimits) -> Callable[[str, str], None]:
    """``mark(name, text)``: a limit's marker file in ``limits.state_dir`` (the grader names the limit from it)."""
    def mark(name: str, text: str) -> None:
        if limits.state_dir:
            try:
                Path(limits.state_dir).mkdir(parents=True, exist_ok=True)
                (Path(limits.state_dir) / name).write_text(text)
            except OSError:
                pass
    return mark


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


def apply_limits(limits: KernelLimits) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.memory_mb <= 0:
        return
    if not limits.watched:  # started first, so RLIMIT_AS does not bind it
        subprocess.Popen([sys.executable, "-m", "autograder.kernel.start_kernel", "--watch", str(os.getpid()),
                          str(limits.memory_mb), limits.state_dir], stdin=subprocess.DEVNULL, close_fds=True)
    if limits.memory_mode == "as":  # a MemoryError in the cell, per process
        limit = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--watch"]:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # kernel interrupts go to the whole group
        mark = marker(KernelLimits(state_dir=argv[3] if len(argv) > 3 else ""))
        watch_tree(int(argv[1]), int(argv[2]), lambda text: mark("memory", text))
        return 0
    limits, argv = split_limits(argv)
    apply_limits(limits)
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
