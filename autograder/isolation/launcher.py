"""Start one sandboxed process and stay outside it until it ends.

    python -I -c "from autograder.isolation.launcher import main; ..." [--spec FILE] [-f CONNECTION_FILE]

This is the kernelspec's command (nbgrader starts it; the spec file is named by
``AUTOGRADER_SANDBOX_SPEC``) and the evaluators' (``--spec``). It reads the :class:`Spec`, applies
the process and memory limits (``limits``), and runs the command in bubblewrap as the sandbox's
uid (root mode) or the grader's (user mode), or -- where the host has no isolation -- directly, in
its own session. Either way the command's environment is the spec's allowlisted one, never the
grader's. The launcher forwards an interrupt (SIGINT, what Jupyter sends to stop a cell) to the
command inside, and its own end ends the sandbox (``--die-with-parent``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from autograder.isolation import bwrap, limits
from autograder.isolation.environment import allowlisted, inside_path
from autograder.isolation.spec import CHANNEL_INSIDE, SPEC_VARIABLE, Spec
from autograder.kernel.start_kernel import KernelLimits, marker, watch_tree

KERNEL_BOOT = ("import sys; del sys.path[0]; from autograder.kernel.start_kernel import main; "
               "sys.exit(main(sys.argv[1:]))")
LAUNCH_BOOT = "import sys; from autograder.isolation.launcher import main; sys.exit(main(sys.argv[1:]))"


def kernelspec_argv() -> list[str]:
    """What a grading kernelspec runs (``-I``: the submission's folder never leads sys.path)."""
    return [sys.executable, "-I", "-c", LAUNCH_BOOT, "-f", "{connection_file}"]


def _kernel_argv(spec: Spec, args: list[str]) -> list[str]:
    """The kernel's command, its connection file as the sandbox sees it (the channel folder is at
    CHANNEL_INSIDE there, and so are the socket paths in a rewritten copy of the file)."""
    if spec.mode in ("root", "user") and "-f" in args:
        index = args.index("-f") + 1
        host = args[index]
        info = json.loads(Path(host).read_text())
        if isinstance(info.get("ip"), str):
            info["ip"] = inside_path(info["ip"], spec.channel)
        copy = Path(spec.channel) / "connection-inside.json"
        copy.write_text(json.dumps(info))
        if spec.mode == "root":
            os.chown(copy, spec.uid, spec.uid)
        args = [*args[:index], f"{CHANNEL_INSIDE}/{copy.name}", *args[index + 1:]]
    return [sys.executable, "-c", KERNEL_BOOT, *args]


def _with_limits(spec: Spec, argv: list[str], watched: bool) -> list[str]:
    """A kernel's or an evaluator worker's ``python -c BOOT ARGS`` with the limit options its boot code
    reads first, derived from the spec (the process never sees the spec file itself); any other
    command (the isolation probe's) unchanged."""
    if len(argv) < 3 or argv[1] != "-c" or not argv[2].endswith("main(sys.argv[1:]))"):
        return argv
    state = f"{CHANNEL_INSIDE if spec.mode in ('root', 'user') else spec.channel}/kernel-state"
    limits = KernelLimits(memory_mb=spec.memory_mb, memory_mode="rss" if spec.gpu else "as", state_dir=state,
                          watched=watched)
    return [*argv[:3], *limits.options(), *argv[3:]]


def _new_session() -> None:
    try:
        os.setsid()
    except PermissionError:  # already a session leader (Jupyter starts kernels that way)
        pass


def _run_plain(spec: Spec, argv: list[str]) -> int:
    """No isolation here: the command in its own session, with the allowlisted environment."""
    _new_session()
    home = Path(spec.channel) / "home"
    home.mkdir(exist_ok=True)
    argv = _with_limits(spec, argv, watched=False)
    os.execve(argv[0], argv, allowlisted(spec.env, sandboxed=False, home=str(home)))
    return 127  # not reached


def _forward_interrupts(proc: subprocess.Popen, child_pid: list[int]) -> None:
    """SIGINT goes to the process group of each command bwrap runs inside; SIGTERM/SIGHUP end it."""
    def handler(signum, _frame):
        if signum != signal.SIGINT:
            proc.kill()
            return
        try:
            import psutil

            for child in psutil.Process(child_pid[0]).children() if child_pid else []:
                try:
                    os.killpg(os.getpgid(child.pid), signal.SIGINT)
                except OSError:
                    child.send_signal(signal.SIGINT)
        except Exception:  # noqa: BLE001 - nothing to interrupt (yet)
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


def _read_child_pid(fd: int, found: list[int]) -> None:
    with os.fdopen(fd, "rb") as handle:
        text = b""
        for chunk in iter(lambda: handle.read(256), b""):
            text += chunk
            try:
                found.append(int(json.loads(text)["child-pid"]))
                return
            except (ValueError, KeyError):
                continue


def run(spec: Spec, argv: list[str]) -> int:
    """Run ``argv`` in the sandbox; returns its exit code (128 + signal when killed)."""
    if spec.mode not in ("root", "user"):
        return _run_plain(spec, argv)
    applied = limits.enter_cgroup(spec.memory_mb, spec.pids_max)
    limits.file_size_limit(spec.disk_mb)
    uid = spec.uid if spec.mode == "root" else os.getuid()
    if spec.mode == "root":  # the connection file: the sandbox user reads it
        for path in [Path(spec.channel), *Path(spec.channel).iterdir()]:
            os.chown(path, uid, uid)
    info_read, info_write = os.pipe()
    # the tree's memory, watched from here when no cgroup bounds it: a process inside cannot stop the watchdog
    watched = spec.memory_mb > 0 and not applied.group
    command = bwrap.build(spec, _with_limits(spec, argv, watched), uid, info_fd=info_write)
    child_pid: list[int] = []
    env = allowlisted(spec.env, sandboxed=True)
    try:
        proc = subprocess.Popen(command.args, pass_fds=(info_write, *command.fds), cwd="/", env=env)
    finally:
        command.close()
        os.close(info_write)
    threading.Thread(target=_read_child_pid, args=(info_read, child_pid), daemon=True).start()
    if watched:
        def mark(text: str) -> None:
            _mark_memory(spec, text)

        threading.Thread(target=watch_tree, args=(proc.pid, spec.memory_mb, mark), daemon=True).start()
    _forward_interrupts(proc, child_pid)
    while True:
        try:
            code = proc.wait()
            break
        except InterruptedError:
            continue
    if applied.group and limits.memory_events(applied.group):
        _mark_memory(spec, f"the sandbox passed its {spec.memory_mb} MiB memory limit")
    limits.release(applied)
    return code if code >= 0 else 128 - code


def _mark_memory(spec: Spec, text: str) -> None:
    """The kernel's own marker, written from outside (the channel's kernel-state folder on the host)."""
    marker(KernelLimits(state_dir=f"{spec.channel}/kernel-state"))("memory", text)


def main(args: list[str]) -> int:
    spec_path = None
    if args[:1] == ["--spec"]:
        spec_path, args = args[1], args[2:]
    spec_path = spec_path or os.environ.get(SPEC_VARIABLE)
    if not spec_path:  # a grading kernel started by hand: no sandbox
        _new_session()
        os.execv(sys.executable, [sys.executable, "-c", KERNEL_BOOT, *args])
    spec = Spec.read(spec_path)
    argv = spec.argv or _kernel_argv(spec, args)
    return run(spec, argv)
