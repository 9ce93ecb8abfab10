"""Memory and process-count limits for one sandbox: cgroup v2 where delegated, rlimits otherwise.

On a host whose unified cgroup hierarchy lets the grader create child groups with the
``memory`` and ``pids`` controllers (root on a cgroup-v2 machine, or a systemd-delegated
subtree), the launcher moves itself into a fresh group with ``memory.max`` and ``pids.max``
before it starts the sandbox, so everything inside is counted together. Elsewhere (cgroup v1,
no delegation) it falls back to rlimits: ``RLIMIT_NPROC`` (per uid: a real bound when the sandbox
has its own uid) here, ``RLIMIT_AS`` per process (the kernel launcher; not on GPU machines), and a
watchdog over the resident memory of the sandbox's whole process tree (``kernel.start_kernel.watch_tree``)
that the launcher runs outside the sandbox, where nothing inside can stop it.
``RLIMIT_FSIZE`` (:func:`file_size_limit`) bounds any one file by the sandbox's disk either way.
"""
from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PREFIX = "course-kit-sandbox-"


@dataclass(frozen=True)
class Applied:
    how: str
    """"cgroup v2" or "rlimits"."""
    group: str = ""
    """The cgroup folder created (removed by :func:`release`)."""
    reason: str = ""
    """Why cgroup v2 was not used."""


def own_cgroup(root: Path = CGROUP_ROOT) -> Path | None:
    """This process's cgroup-v2 folder, or None on a host without the unified hierarchy."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    unified = [line.split(":", 2)[2] for line in lines if line.startswith("0::")]
    if not unified or not (root / "cgroup.controllers").exists():
        return None
    return root / unified[0].lstrip("/")


def delegated(group: Path | None) -> str:
    """'' when ``group`` can hold child groups with memory and pids limits, else why not."""
    if group is None:
        return "no cgroup v2 (unified) hierarchy here"
    try:
        controllers = (group / "cgroup.controllers").read_text().split()
    except OSError as error:
        return f"cannot read {group}/cgroup.controllers ({error.strerror})"
    missing = [c for c in ("memory", "pids") if c not in controllers]
    if missing:
        return f"the {', '.join(missing)} controller(s) are not delegated to {group}"
    if not os.access(group, os.W_OK):
        return f"{group} is not writable by this user"
    return ""


def file_size_limit(file_mb: int) -> None:
    """No file the sandbox writes may be larger than its disk (``RLIMIT_FSIZE``, inherited by
    everything it starts): a cgroup has no such limit, so it is set either way."""
    if file_mb > 0:
        limit = file_mb * 2**20
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE,
                           (limit, limit if hard == resource.RLIM_INFINITY else min(limit, hard)))


def enter_cgroup(memory_mb: int, pids_max: int, root: Path = CGROUP_ROOT, parent: Path | None = None) -> Applied:
    """Move this process into a new child group with the limits; falls back to :func:`rlimits`."""
    parent = parent if parent is not None else own_cgroup(root)
    reason = delegated(parent)
    if not reason:
        group = parent / f"{GROUP_PREFIX}{os.getpid()}"
        try:
            subtree = (parent / "cgroup.subtree_control").read_text().split()
            for controller in ("memory", "pids"):
                if controller not in subtree:
                    (parent / "cgroup.subtree_control").write_text(f"+{controller}")
            group.mkdir(exist_ok=True)
            if memory_mb > 0:
                (group / "memory.max").write_text(str(memory_mb * 2**20))
                if (group / "memory.swap.max").exists():
                    (group / "memory.swap.max").write_text("0")
            (group / "pids.max").write_text(str(pids_max))
            (group / "cgroup.procs").write_text(str(os.getpid()))
            return Applied("cgroup v2", group=str(group))
        except OSError as error:
            reason = f"could not set up {group} ({error.strerror or error})"
    rlimits(pids_max)
    return Applied("rlimits", reason=reason)


def rlimits(pids_max: int) -> None:
    """The fallback: bound processes of this uid (memory is the kernel launcher's job)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() != 0 or pids_max <= 0:
        return  # RLIMIT_NPROC counts every process of the uid: only meaningful for a sandbox uid
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = pids_max if hard == resource.RLIM_INFINITY else min(pids_max, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


def memory_events(group: str) -> bool:
    """True when the group's memory limit was hit (an ``oom_kill`` in memory.events)."""
    try:
        for line in (Path(group) / "memory.events").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill" and int(value) > 0:
                return True
    except (OSError, ValueError):
        pass
    return False


def release(applied: Applied) -> None:
    """Remove the group (once its processes are gone)."""
    if applied.group:
        try:
            os.rmdir(applied.group)
        except OSError:
            pass
