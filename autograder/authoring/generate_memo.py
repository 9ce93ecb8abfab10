"""What ``nbgrader generate_assignment`` wrote for a course, kept for the rest of the process.

Every autograde call, reference run and release starts from a throwaway course whose releases
nbgrader generates in a fresh process (about 6 s, most of it importing nbgrader). Within one
process the same sources are generated again and again (the demo's several grading calls, the
test suite's batches), and the result depends only on the files of the course before
generating. So :func:`restore` copies a previous result when those files are byte-identical
(the course's own path aside), and :func:`remember` keeps a copy of a new one.

Only the grader's own course copies pass through here (instructor sources, never a student's
file), and only in memory of this process: nothing outlives it, so a changed kit never meets a
stale entry.
"""
from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
from pathlib import Path

_lock = threading.Lock()
_entries: dict[str, Path] = {}  # digest of the course before generating -> a copy of what generating added
_root: Path | None = None


def _files(course: Path) -> dict[str, Path]:
    return {path.relative_to(course).as_posix(): path for path in course.rglob("*") if path.is_file()}


def snapshot(course: Path, assignment_ids: list[str], only: frozenset | None = None) -> tuple[str, frozenset]:
    """(digest, relative paths) of every file in ``course`` (or those in ``only``) before
    generating; its own path is written into nbgrader_config.py, so it is replaced by a
    placeholder first."""
    course = Path(course)
    digest = hashlib.sha256("\0".join(assignment_ids).encode())
    files = {relative: path for relative, path in _files(course).items() if only is None or relative in only}
    for relative in sorted(files):
        data = files[relative].read_bytes().replace(str(course).encode(), b"<course>")
        digest.update(f"\0{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest(), frozenset(files)


def restore(key: str, course: Path) -> bool:
    """Copy a remembered result into ``course``; False when there is none."""
    with _lock:
        stored = _entries.get(key)
        if stored is None:
            return False
        shutil.copytree(stored, course, dirs_exist_ok=True)
    return True


def remember(key: str, course: Path, assignment_ids: list[str], before: frozenset) -> None:
    """Keep a copy of the files generating added to ``course`` (those not in ``before``), unless
    generating also changed one of those: then a copy of the additions alone would be wrong."""
    global _root
    if snapshot(course, assignment_ids, only=before) != (key, before):
        return
    added = {relative: path for relative, path in _files(Path(course)).items() if relative not in before}
    with _lock:
        if key in _entries:
            return
        if _root is None:
            _root = Path(tempfile.mkdtemp(prefix="course-kit-generated-"))
            atexit.register(shutil.rmtree, _root, True)
        stored = _root / str(len(_entries))
        stored.mkdir()
        for relative, path in added.items():
            (stored / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, stored / relative)
        _entries[key] = stored
