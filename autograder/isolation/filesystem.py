"""What a sandbox may read: the system, Python and its packages, and the model caches.

Read-only, always: the system folders and the Python installation with its packages (never a
folder that holds this kit's checkout: solutions, tests, other worktrees), ``helpers/``, and the
parts of ``autograder`` the sandbox imports. Model caches are exposed as their ``hub/`` and
``datasets/`` folders only (an ``HF_HOME`` also holds the instructor's ``token``), at neutral
paths inside. When the sandbox runs as another uid and a cache is not world-readable, the grader
copies what the sandbox needs into a folder it creates itself; it never changes the mode of a
file it did not create.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import sys
from pathlib import Path

SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sys")
CACHE_INSIDE = "/run/caches"
"""Model caches and data folders appear under this path inside the sandbox."""


def autograder_dir() -> str:
    """The ``autograder`` package folder."""
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def _python_roots() -> list[str]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    roots.update(entry for entry in sys.path if entry and os.path.isdir(entry))
    spec = importlib.util.find_spec("helpers")
    if spec is not None and spec.submodule_search_locations:
        roots.update(spec.submodule_search_locations)
    return sorted(os.path.realpath(r) for r in roots)


def readonly_roots() -> list[str]:
    """Host folders every sandbox sees read-only at the same path (nested ones folded away)."""
    here = autograder_dir()
    installs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots = []
    for root in _python_roots():
        holds_checkout = here.startswith(root.rstrip("/") + "/")
        if holds_checkout and root not in installs and os.path.basename(root) not in ("site-packages",
                                                                                       "dist-packages"):
            continue  # the repository (solutions/, tests/) or a folder above it
        roots.append(root)
    kept: list[str] = []
    for root in sorted(set(p for p in SYSTEM if os.path.lexists(p)) | set(roots)):
        if not any(root.startswith(k.rstrip("/") + "/") for k in kept if not os.path.islink(k)):
            kept.append(root)
    return kept


def hf_cache_folders() -> dict[str, str]:
    """{"hub": path, "datasets": path} of the grader's Hugging Face caches that exist."""
    home = Path(os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME")
                                                   or Path.home() / ".cache") / "huggingface")
    found = {"hub": os.environ.get("HF_HUB_CACHE") or home / "hub",
             "datasets": os.environ.get("HF_DATASETS_CACHE") or home / "datasets"}
    return {name: str(Path(path).resolve()) for name, path in found.items() if Path(path).is_dir()}


CACHE_VARIABLES = {"hub": "HF_HUB_CACHE", "datasets": "HF_DATASETS_CACHE", "math": "COURSE_MATH_SOURCE",
                   "kit": "COURSE_KIT_CACHE"}
"""The environment variable that names each cache or data folder a notebook reads."""


def data_folders() -> dict[str, str]:
    """Folders named by the grader's environment that notebooks read (``COURSE_MATH_SOURCE``), and the kit's
    own model cache once the small profile's model is converted there (``COURSE_KIT_CACHE``)."""
    from helpers import small_model

    found = {}
    value = os.environ.get("COURSE_MATH_SOURCE", "")
    if value and Path(value).is_dir():
        found["math"] = str(Path(value).resolve())
    if small_model.folder().is_dir():
        found["kit"] = str(small_model.cache_root().resolve())
    return found


def cache_env(folders: dict[str, str]) -> dict[str, str]:
    """{environment variable: path} for folders named as :func:`hf_cache_folders` and :func:`data_folders` name them."""
    return {CACHE_VARIABLES[name]: path for name, path in folders.items()}


def world_readable(root: str) -> bool:
    """Every folder (r-x) and file (r--) under ``root`` is readable by any uid, links followed."""
    for dirpath, _dirnames, filenames in os.walk(root, followlinks=False):
        for name, bits in [(dirpath, 0o005)] + [(os.path.join(dirpath, f), 0o004) for f in filenames]:
            try:
                mode = os.stat(name).st_mode
            except OSError:
                return False
            if mode & bits != bits:
                return False
    return all(os.stat(p).st_mode & 0o005 == 0o005 for p in _parents(root))


def _parents(path: str) -> list[str]:
    parts, out = Path(path).parts, []
    for i in range(1, len(parts)):
        out.append(str(Path(*parts[:i])))
    return out


def copy_readable(source: str, target: Path) -> None:
    """A world-readable copy of ``source`` (links resolved: the hub's blobs become plain files)."""
    for dirpath, _dirnames, filenames in os.walk(source, followlinks=False):
        relative = os.path.relpath(dirpath, source)
        folder = target / relative if relative != "." else target
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o755)
        for name in filenames:
            src = os.path.join(dirpath, name)
            if not os.path.exists(src):  # a dangling link
                continue
            shutil.copyfile(src, folder / name)
            os.chmod(folder / name, 0o644)


_staged: dict = {}


def stage_caches(scratch: Path, other_uid: bool, log=None) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(mounts, env) that give a sandbox the model caches and data folders, read-only, at
    neutral paths. ``other_uid``: the sandbox runs as another uid (root mode), so a cache that is
    not world-readable is copied into ``scratch`` (a folder the grader created) instead of bound.
    Worked out once per (scratch, mode, caches): every submission of a batch shares it."""
    key = (str(scratch), other_uid, tuple(sorted({**hf_cache_folders(), **data_folders()}.items())))
    if key not in _staged:
        _staged[key] = _stage(Path(scratch), other_uid, log)
    return _staged[key]


def _stage(scratch: Path, other_uid: bool, log) -> tuple[list[tuple[str, str]], dict[str, str]]:
    mounts, env = [], {}
    for name, path in {**hf_cache_folders(), **data_folders()}.items():
        inside = f"{CACHE_INSIDE}/{name}"
        source = path
        if other_uid and not world_readable(path):
            source = str(Path(scratch) / "caches" / name)
            if not Path(source).exists():
                if log:
                    log(f"copying {path} for the sandbox users (it is not world-readable; nothing there is changed)")
                copy_readable(path, Path(source))
                os.chmod(Path(scratch) / "caches", 0o755)
        mounts.append((source, inside))
        env[CACHE_VARIABLES[name]] = inside
    return mounts, env


def matplotlib_caches() -> list[Path]:
    """The grader's matplotlib font list, so a kernel does not rebuild it (seconds) on import."""
    folders = [os.environ.get("MPLCONFIGDIR"),
               Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"]
    found = []
    for folder in folders:
        if folder and Path(folder).is_dir():
            found += [p for p in Path(folder).glob("fontlist-*.json") if p.is_file()]
    return found[:4]


def regular_files(folder: Path, skip_notebooks: bool) -> list[tuple[Path, str]]:
    """(host file, path relative to ``folder``) for the regular files under ``folder`` (no links,
    FIFOs or devices), notebooks left out on request."""
    found = []
    for entry in os.scandir(folder):
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            found += [(path, f"{entry.name}/{rel}") for path, rel in regular_files(Path(entry.path), False)]
        elif stat.S_ISREG(mode) and not (skip_notebooks and entry.name.endswith(".ipynb")):
            found.append((Path(entry.path), entry.name))
    return found
