"""OS-level isolation for one grading kernel (or one grader-side evaluator).

Each kernel runs like this (nothing here needs a package outside the standard library)::

    nbgrader job (grader user, sees the course copy)
      └─ launcher   python -I -c "...sandbox.launch"   (outside; forwards SIGINT, dies -> all die)
           └─ init  pid 1 of new PID, mount, network, IPC and UTS namespaces
                └─ kernel  own session, unprivileged uid, cwd /home/student/<assignment>

The kernel's filesystem is a fresh root built from an allowlist: the system and Python
directories, the installed packages, ``helpers/``, the model caches (all read-only), a copy of
``autograder/`` holding only the modules a kernel needs (the guard, ``exact``), the channel
folder with its ZMQ sockets, and one size-limited tmpfs for ``/tmp``, ``/dev/shm`` and
``/home/student/<assignment>`` (a copy of its own submission). The course copy (source with the
hidden tests, the gradebook), the repository, other submissions and ``OUT`` are not in it; the
network namespace has no interface but a down loopback. When the kernel exits, init exits and
the kernel of the PID namespace kills everything the notebook started (``setsid``, double fork
and all). The kernel talks to the grader over ZMQ *ipc* sockets in the channel folder.

Modes (:func:`probe` picks one once per process):

- ``root``: the grader runs as root. Namespaces, and the kernel runs as its own unused uid
  (``AUTOGRADER_UID_BASE`` + n), with no capabilities and ``no_new_privs``.
- ``user``: no root, but unprivileged user namespaces work (most Linux hosts). Same
  namespaces; the kernel keeps the grader's uid on the outside but holds no capability.
- ``none``: the host cannot (Colab, locked-down containers, macOS). The kernel runs as today,
  in its own session, with the in-kernel guards only; the batch says so once.

``AUTOGRADER_SANDBOX=off`` (or ``autograde --sandbox off``) forces ``none``; ``required`` stops
the batch when isolation is unavailable.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS = 1, 24, 28, 38
SYSCALLS = {"x86_64": {"pivot_root": 155, "capset": 126}, "aarch64": {"pivot_root": 41, "capset": 91}}
UID_BASE = int(os.environ.get("AUTOGRADER_UID_BASE", "2000000"))
HOME = "/home/student"
# what a kernel imports from autograder/ (the rest -- evaluators, samples, the grader -- stays out)
KERNEL_MODULES = ("__init__.py", "kernel")
KERNEL_BOOT = ("import sys; del sys.path[0]; from autograder.kernel.launcher import main; "
               "sys.exit(main(sys.argv[1:]))")
LAUNCH_BOOT = "import sys; from autograder.isolation.sandbox import launch; sys.exit(launch(sys.argv[1:]))"
SPEC_VARIABLE = "AUTOGRADER_SANDBOX_SPEC"


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
            return "namespaces+uid"
        if self.mode == "user":
            return "namespaces (user)"
        return f"none ({self.reason})" if self.reason else "none"


# ----------------------------------------------------------------------------------------------
# system calls
# ----------------------------------------------------------------------------------------------

_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def _mount(source, target, fstype, flags: int, data: str | None = None) -> None:
    _check(_c().mount(source and str(source).encode(), str(target).encode(), fstype and fstype.encode(),
                      ctypes.c_ulong(flags), data and data.encode()), f"mount {source} on {target}")


def _unshare(flags: int) -> None:
    _check(_c().unshare(flags), "unshare")


def _prctl(option: int, arg: int = 0) -> int:
    return _c().prctl(option, ctypes.c_ulong(arg), 0, 0, 0)


def _syscall(name: str, *args) -> int:
    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(errno.ENOSYS, f"{name}: unsupported architecture {platform.machine()}")
    return _check(_c().syscall(numbers[name], *args), name)


def _drop_all_capabilities() -> None:
    """No capability left in any set, none regained by exec (the ``user`` mode's root)."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) < 0 and ctypes.get_errno() == errno.EINVAL:
            break
    _prctl(PR_SET_SECUREBITS, 0x2F)  # NOROOT(+LOCKED), NO_SETUID_FIXUP(+LOCKED), KEEP_CAPS_LOCKED

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()
    _syscall("capset", ctypes.byref(header), ctypes.byref(data))


# ----------------------------------------------------------------------------------------------
# choosing a mode
# ----------------------------------------------------------------------------------------------

_probed: dict = {}
_probe_lock = threading.Lock()


def probe(requested: str | None = None) -> Isolation:
    """The isolation this host gives (tried for real once per process, ~0.2 s)."""
    requested = (requested or os.environ.get("AUTOGRADER_SANDBOX") or "auto").lower()
    if requested in ("off", "none", "0", "false"):
        return Isolation("none", "switched off (--sandbox off)")
    only = requested if requested in ("root", "user") else None  # force one mode (tests, debugging)
    with _probe_lock:
        if only not in _probed:
            _probed[only] = _probe(only)
    found = _probed[only]
    if requested == "required" and not found.isolated:
        raise SandboxError(f"kernel isolation is required but unavailable here: {found.reason}")
    return found


def _probe(only: str | None = None) -> Isolation:
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"{sys.platform} has no Linux namespaces")
    if platform.machine() not in SYSCALLS:
        return Isolation("none", f"unsupported architecture {platform.machine()}")
    modes = [only] if only else (["root"] if os.geteuid() == 0 else []) + ["user"]
    reasons = []
    for mode in modes:
        channel = Path(tempfile.mkdtemp(prefix="agp-"))
        (channel / "empty").mkdir()
        try:
            spec = Spec(mode=mode, uid=UID_BASE, gid=UID_BASE, disk_mb=16, channel=str(channel),
                        copy_from=str(channel / "empty"),
                        argv=[sys.executable, "-I", "-c", "import os; print('isolated', os.getpid(), os.getuid())"])
            spec_path = spec.write()
            run = subprocess.run([sys.executable, "-I", "-c", LAUNCH_BOOT, "--spec", str(spec_path)],
                                 capture_output=True, text=True, timeout=60, cwd=channel)
            words = run.stdout.split()
            if run.returncode == 0 and words[:2] == ["isolated", "2"]:
                return Isolation(mode)
            detail = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
            reasons.append(f"{mode}: {detail[:200]}")
        except Exception as error:  # noqa: BLE001 - any failure means this mode is unavailable
            reasons.append(f"{mode}: {type(error).__name__}: {error}"[:200])
        finally:
            shutil.rmtree(channel, ignore_errors=True)
    return Isolation("none", "; ".join(reasons) or "no namespaces")


# ----------------------------------------------------------------------------------------------
# the specification the grader writes for one kernel
# ----------------------------------------------------------------------------------------------

@dataclass
class Spec:
    mode: str
    channel: str
    """Folder shared with the kernel (sockets, connection file, kernel-state/); also holds the spec."""
    uid: int = UID_BASE
    gid: int = UID_BASE
    disk_mb: int = 1024
    """Size of the kernel's only writable filesystem (/tmp, /dev/shm, its work folder)."""
    workdir: str = HOME + "/work"
    copy_from: str | None = None
    """Folder whose files (notebooks excepted) become the work folder; None: the launcher's cwd."""
    notebooks: tuple = ()
    """Notebooks copied into the work folder (the submitted ones: no hidden test in them)."""
    readonly: tuple = ()
    """Extra paths bound read-only at the same place (model caches, an evaluator's inbox)."""
    gpu: bool = False
    autograder_files: tuple = KERNEL_MODULES
    env: dict | None = None
    argv: list | None = None
    """The command; None for a kernel (built from the connection file argument)."""

    def write(self) -> Path:
        path = Path(self.channel) / "sandbox.json"
        path.write_text(json.dumps(self.__dict__, default=list))
        os.chmod(path, 0o600)
        return path


def _python_roots() -> list[str]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            roots.add(entry)
    import importlib.util

    for package in ("helpers",):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            roots.update(spec.submodule_search_locations)
    return sorted(os.path.realpath(r) for r in roots)


def autograder_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the autograder package


def base_readonly() -> list[str]:
    """What every sandbox sees read-only: the OS, Python and the installed packages."""
    system = [p for p in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sys")
              if os.path.lexists(p)]
    here = autograder_dir()
    installs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots = []
    for root in _python_roots():
        inside = here.startswith(root.rstrip("/") + "/")
        # never a folder holding this autograder's checkout (the repository: solutions/, tests/,
        # other worktrees); an installed autograder inside site-packages is filtered in _init
        if inside and root not in installs and os.path.basename(root) not in ("site-packages", "dist-packages"):
            continue
        roots.append(root)
    kept = []
    for root in sorted(set(system + roots)):  # a folder inside one already bound needs no bind of its own
        if not any(root.startswith(k.rstrip("/") + "/") for k in kept if not os.path.islink(k)):
            kept.append(root)
    return kept


def cache_paths() -> list[str]:
    """Model caches a notebook reads (bound read-only; built before grading)."""
    home = Path.home()
    candidates = [os.environ.get("COURSE_KIT_CACHE") or home / ".cache" / "course-kit",
                  os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / "huggingface",
                  os.environ.get("HF_HUB_CACHE"), os.environ.get("TRANSFORMERS_CACHE")]
    return sorted({str(Path(p).resolve()) for p in candidates if p and Path(p).is_dir()})


def open_caches_for_sandbox_users(paths: list[str] | None = None) -> int:
    """Root mode: kernels run as other uids, so the model caches must be world-readable (a public
    model; ``tempfile.mkdtemp`` folders are 0700). Adds o+r (and o+x on folders); returns how
    many entries changed."""
    changed = 0
    for root in paths if paths is not None else cache_paths():
        for dirpath, dirnames, filenames in os.walk(root):
            for name, bits in [(dirpath, 0o005)] + [(os.path.join(dirpath, f), 0o004) for f in filenames]:
                try:
                    mode = os.lstat(name).st_mode
                    if not stat.S_ISLNK(mode) and mode & bits != bits:
                        os.chmod(name, stat.S_IMODE(mode) | bits)
                        changed += 1
                except OSError:
                    pass
    return changed


def cache_env() -> dict:
    """Absolute cache locations for the sandbox (its HOME is not the grader's)."""
    home = Path.home()
    env = {"COURSE_KIT_CACHE": str(Path(os.environ.get("COURSE_KIT_CACHE") or home / ".cache" / "course-kit")),
           "HF_HOME": str(Path(os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
                               / "huggingface"))}
    for name in ("HF_HUB_CACHE", "TRANSFORMERS_CACHE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


_uid_lock = threading.Lock()
_uid_counter = [0]


def next_uid() -> int:
    """A uid no other kernel of this grader uses at the same time (root mode)."""
    with _uid_lock:
        _uid_counter[0] += 1
        return UID_BASE + (os.getpid() % 5000) * 200 + _uid_counter[0] % 200


def kernelspec_argv() -> list[str]:
    return [sys.executable, "-I", "-c", LAUNCH_BOOT, "-f", "{connection_file}"]


def kill_uid(uid: int) -> int:
    """Kill every process left running as ``uid`` (root mode; normally there are none)."""
    killed = 0
    try:
        import psutil
    except ImportError:
        return 0
    for proc in psutil.process_iter(["uids"]):
        try:
            if proc.info["uids"] and proc.info["uids"].real == uid:
                proc.kill()
                killed += 1
        except (psutil.Error, OSError):
            pass
    return killed


# ----------------------------------------------------------------------------------------------
# launcher (outside) and init (pid 1 inside)
# ----------------------------------------------------------------------------------------------

def launch(args: list[str]) -> int:
    """Entry point of the kernelspec / evaluator command: build the sandbox, run, return its code."""
    spec_path = None
    if args[:1] == ["--spec"]:
        spec_path, args = args[1], args[2:]
    spec_path = spec_path or os.environ.get(SPEC_VARIABLE)
    if not spec_path:  # a plain kernel: own session, in-kernel guards only
        _new_session()
        os.execv(sys.executable, [sys.executable, "-c", KERNEL_BOOT, *args])
    data = json.loads(Path(spec_path).read_text())
    spec = Spec(**{k: (tuple(v) if k in ("notebooks", "readonly", "autograder_files") else v) for k, v in data.items()})
    argv = spec.argv or [sys.executable, "-c", KERNEL_BOOT, *args]
    env = dict(spec.env or {})
    if spec.mode not in ("root", "user"):
        _new_session()
        merged = {k: v for k, v in os.environ.items() if k != SPEC_VARIABLE}
        merged.update(env)
        os.execve(argv[0], argv, merged)
    channel = Path(spec.channel)
    cwd = spec.copy_from or os.getcwd()
    if spec.mode == "root":
        for path in [channel, *channel.iterdir()]:
            if path.name != "sandbox.json":
                os.chown(path, spec.uid, spec.gid)
        os.chmod(channel, 0o700)
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if spec.mode == "user":
        uid, gid = os.geteuid(), os.getegid()
        _unshare(flags | CLONE_NEWUSER)
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    else:
        _unshare(flags)
    child = os.fork()
    if child == 0:
        try:
            code = _init(spec, argv, env, cwd)
        except BaseException as error:  # noqa: BLE001 - report and die: the grader sees a dead kernel
            print(f"autograder sandbox: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            code = 70
        os._exit(code)

    def forward(signum, _frame):
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _kept_flags(path: str) -> int:
    """The flags a read-only remount must keep (a user namespace may not change them)."""
    f = os.statvfs(path).f_flag
    kept = f & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for st_flag, ms_flag in ((1024, 1024), (2048, 2048), (4096, 1 << 21)):  # noatime, nodiratime, relatime
        if f & st_flag:
            kept |= ms_flag
    return kept


def _new_session() -> None:
    try:
        os.setsid()
    except PermissionError:  # already a session leader (jupyter_client starts kernels that way)
        pass


def _bind(source: str, target: Path, readonly: bool, recursive: bool = True) -> None:
    src = Path(source)
    if src.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
    _mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    if readonly:
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _kept_flags(source))


def _copy_tree(source: Path, target: Path, skip_notebooks: bool) -> None:
    """Regular files and folders only (no links, FIFOs or devices), notebooks left out on request."""
    for entry in os.scandir(source):
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            (target / entry.name).mkdir(exist_ok=True)
            _copy_tree(Path(entry.path), target / entry.name, False)
        elif stat.S_ISREG(mode) and not (skip_notebooks and entry.name.endswith(".ipynb")):
            shutil.copyfile(entry.path, target / entry.name, follow_symlinks=False)


def _init(spec: Spec, argv: list[str], env: dict, cwd: str) -> int:
    """pid 1 of the new PID namespace: build the root, start the command, reap, exit with it."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    channel = Path(spec.channel)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = channel / "root"
    root.mkdir(exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=8m,mode=755")
    rw = root / ".rw"
    rw.mkdir()
    _mount("tmpfs", rw, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(spec.disk_mb)}m,mode=755")
    binds: list[tuple[str, str, bool]] = []  # (source, target, read-only)
    for path in base_readonly():
        if os.path.islink(path) and os.path.dirname(path) == "/":  # /bin -> usr/bin on merged-/usr systems
            os.symlink(os.readlink(path), root / path.lstrip("/"))
        else:
            binds.append((path, path, True))
    binds += [(p, p, True) for p in spec.readonly if os.path.exists(p)]
    binds.append((str(channel), str(channel), False))
    (rw / "tmp").mkdir(mode=0o1777)
    os.chmod(rw / "tmp", 0o1777)
    for name in ("home", "shm"):
        (rw / name).mkdir()
    binds += [(str(rw / "tmp"), "/tmp", False), (str(rw / "home"), "/home", False)]
    for target, _unused in ((p, 0) for p in ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")):
        binds.append((target, target, False))
    if spec.gpu:
        binds += [(str(p), str(p), False) for p in sorted(Path("/dev").glob("nvidia*"))]
    # shorter targets first: /tmp before the channel folder that may sit inside it
    for source, target, readonly in sorted(binds, key=lambda b: (b[1].count("/"), b[1])):
        if os.path.exists(source):
            # the channel without its submounts (the new root is mounted inside it)
            _bind(source, root / target.lstrip("/"), readonly, recursive=source != str(channel))
    shm = root / "dev" / "shm"
    shm.mkdir(parents=True, exist_ok=True)
    _bind(str(rw / "shm"), shm, False)
    os.chmod(rw / "shm", 0o1777)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                       ("stderr", "/proc/self/fd/2")):
        os.symlink(link, root / "dev" / name)
    # autograder/: only the modules a kernel (or an evaluator) imports
    package = root / autograder_dir().lstrip("/")
    package.mkdir(parents=True, exist_ok=True)
    _mount("tmpfs", package, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
    for name in spec.autograder_files:
        source = Path(autograder_dir()) / name
        if source.is_dir():
            shutil.copytree(source, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copyfile(source, package / name)
    _mount(None, package, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    # who the kernel is: a passwd entry for its uid, a home, its work folder
    uid, gid = (spec.uid, spec.gid) if spec.mode == "root" else (0, 0)
    passwd = rw / ".passwd"
    passwd.write_text(f"root:x:0:0:root:/root:/bin/sh\nstudent:x:{uid}:{gid}:student:{HOME}:/bin/sh\n"
                      if uid else f"student:x:0:0:student:{HOME}:/bin/sh\n")
    group = rw / ".group"
    group.write_text(f"root:x:0:\nstudent:x:{gid}:\n" if gid else "student:x:0:\n")
    for name, source in (("passwd", passwd), ("group", group)):
        if (root / "etc").is_dir():
            _bind(str(source), root / "etc" / name, True)
    work = root / spec.workdir.lstrip("/")
    work.mkdir(parents=True, exist_ok=True)
    if os.path.isdir(cwd):
        _copy_tree(Path(cwd), work, skip_notebooks=True)
    for notebook in spec.notebooks:
        if os.path.isfile(notebook):
            shutil.copyfile(notebook, work / os.path.basename(notebook))
    mpl = root / "tmp" / "matplotlib"
    mpl.mkdir()
    for cache in _matplotlib_caches():
        shutil.copyfile(cache, mpl / cache.name)
    if spec.mode == "root":  # the kernel owns its home and work folder (not /home itself)
        for dirpath, dirnames, filenames in os.walk(rw / "home" / HOME.rsplit("/", 1)[-1]):
            for name in [*dirnames, *filenames, ""]:
                os.lchown(os.path.join(dirpath, name), uid, gid)
        for path in (mpl, *mpl.iterdir()):
            os.lchown(path, uid, gid)
    proc = root / "proc"
    proc.mkdir(exist_ok=True)
    _mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    old = root / ".old"
    old.mkdir()
    _syscall("pivot_root", str(root).encode(), str(old).encode())
    os.chdir("/")
    _check(_c().umount2(b"/.old", MNT_DETACH), "umount old root")
    os.rmdir("/.old")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    try:
        _c().sethostname(b"grader", 6)
    except Exception:  # noqa: BLE001 - cosmetic
        pass
    full_env = {"HOME": HOME, "USER": "student", "LOGNAME": "student", "TMPDIR": "/tmp",
                "MPLCONFIGDIR": "/tmp/matplotlib", "XDG_CACHE_HOME": "/tmp/.cache",
                "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
                "LANG": "C.UTF-8", **env}
    kernel = os.fork()
    if kernel == 0:
        try:
            _new_session()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.chdir(spec.workdir)
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            size = int(spec.disk_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
            if spec.mode == "root":
                resource.setrlimit(resource.RLIMIT_NPROC, (1024, 1024))
                for cap in range(64):
                    if _prctl(PR_CAPBSET_DROP, cap) < 0 and ctypes.get_errno() == errno.EINVAL:
                        break
                os.setgroups([])
                os.setresgid(gid, gid, gid)
                os.setresuid(uid, uid, uid)
            else:
                _drop_all_capabilities()
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            os.execve(argv[0], argv, full_env)
        except BaseException as error:  # noqa: BLE001
            print(f"autograder sandbox: could not start {argv[0]}: {error}", file=sys.stderr, flush=True)
            os._exit(71)

    def forward(signum, _frame):
        if signum == signal.SIGINT:
            try:
                os.kill(kernel, signal.SIGINT)
            except ProcessLookupError:
                pass
        else:
            os._exit(128 + signum)  # pid 1 exits: the kernel kills the whole namespace

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        if pid == kernel:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _matplotlib_caches() -> list[Path]:
    """The grader's matplotlib font list, so a kernel does not rebuild it (seconds) on import."""
    folders = [os.environ.get("MPLCONFIGDIR"),
               Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"]
    found = []
    for folder in folders:
        if folder and Path(folder).is_dir():
            found += [p for p in Path(folder).glob("fontlist-*.json") if p.is_file()]
    return found[:4]
