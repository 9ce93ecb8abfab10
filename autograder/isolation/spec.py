"""What one sandbox gets: :class:`Spec`, written by the grader, read by the launcher.

The grader writes a spec file (mode 0600, in a folder only it can read) and names it in the
environment of the process that starts the kernel (``AUTOGRADER_SANDBOX_SPEC``); the launcher
reads it and builds the sandbox from it. Nothing the kernel does can change it.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

SPEC_VARIABLE = "AUTOGRADER_SANDBOX_SPEC"
HOME = "/home/student"
CHANNEL_INSIDE = "/run/kernel"
"""Where the channel folder appears inside the sandbox (its host path stays unknown there)."""
UID_BASE = int(os.environ.get("AUTOGRADER_UID_BASE", "2000000"))


@dataclass
class Spec:
    mode: str
    """root (own namespaces, own uid) | user (own namespaces, the grader's uid) | none."""
    channel: str
    """Folder shared with the sandbox at ``CHANNEL_INSIDE``: sockets, connection file, kernel-state/."""
    uid: int = UID_BASE
    """The uid the sandbox runs as in root mode."""
    disk_mb: int = 1024
    """Size of each writable filesystem in the sandbox (/tmp, /dev/shm, the home folder)."""
    memory_mb: int = 0
    """Memory limit (cgroup v2 where delegated; else the kernel launcher's rlimit or watchdog)."""
    pids_max: int = 1024
    """Processes and threads the sandbox may have at once (cgroup v2 or RLIMIT_NPROC)."""
    workdir: str = HOME + "/work"
    """The sandbox's working folder (a fresh copy, inside its own tmpfs)."""
    work_from: str | None = None
    """Host folder whose regular files (notebooks left out) are copied into ``workdir``."""
    notebooks: tuple = ()
    """Host notebooks copied into ``workdir`` (the submitted ones: no hidden test in them)."""
    mounts: tuple = ()
    """(host path, path inside) pairs bound read-only: model caches, datasets, an inbox."""
    gpu: bool = False
    """Bind the NVIDIA device files."""
    autograder_parts: tuple = ("kernel",)
    """Subpackages of ``autograder`` the sandbox can import (the rest stays out)."""
    env: dict = field(default_factory=dict)
    """The sandbox's whole environment, on top of the fixed basics (HOME, PATH, LANG...)."""
    argv: list | None = None
    """The command; None for a kernel (``-f CONNECTION_FILE`` from the kernelspec is appended)."""
    hide: tuple = ()
    """Host folders the sandbox sees empty (an empty tmpfs over them): a process that must not import a library."""

    def write(self, folder: str | Path | None = None) -> Path:
        """Write the spec to a 0600 file in ``folder`` (default: a fresh private temp folder)."""
        folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="ags-"))
        path = folder / "sandbox.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(asdict(self), handle)
        return path

    @classmethod
    def read(cls, path: str | Path) -> Spec:
        data = json.loads(Path(path).read_text())
        for key in ("notebooks", "autograder_parts", "hide"):
            data[key] = tuple(data.get(key, ()))
        data["mounts"] = tuple(tuple(pair) for pair in data.get("mounts", ()))
        return cls(**data)
