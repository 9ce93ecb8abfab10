"""From a student's folder to something gradable: layout checks, safe copies, archives, artifacts.

Everything here turns an odd upload into a feedback line rather than a zero:

- only regular files and folders are copied (symbolic links, FIFOs, sockets and device files are
  skipped with a note; a FIFO would otherwise block the copy forever);
- ZIP archives in the submission (the ``helpers.submission.pack`` zip, an ``artifacts.zip``) are
  extracted with limits on size, file count and nesting (a zip bomb is refused, not expanded);
- a notebook wrapped in one or more folders, or under another name, is found and graded;
- a declared artifact folder one level deeper (``<id>/artifacts/...``, ``artifacts/artifacts/...``)
  is moved to where the notebook expects it, with a note;
- ``.py`` files that would shadow a module are dropped;
- a ``timestamp.txt`` the student uploaded is ignored: lateness comes from the LMS's metadata
  that ``collect`` recorded (``SUBMISSIONS/_collect_report.json``), else the file's mtime.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from autograder.manifest import Assignment
from autograder.grading.outcome import SubmissionLayoutError

JUNK = {"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints", "__pycache__"}
MAX_FILES = 5000
MAX_BYTES = 1024 * 2**20
MAX_ZIP_DEPTH = 2
MAX_RATIO = 200  # uncompressed / compressed, per member larger than 1 MiB
REPORT_NAME = "_collect_report.json"


class Budget:
    """Bytes and files still allowed in one submission (archives included)."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES):
        self.bytes, self.files = max_bytes, max_files
        self.limit_mb = max_bytes // 2**20

    def take(self, size: int) -> bool:
        if size > self.bytes or self.files <= 0:
            return False
        self.bytes -= size
        self.files -= 1
        return True


def discover(submissions: Path, assignment_ids: list[str]) -> list[tuple[str, str, Path]]:
    """(student, assignment, folder) for every submission; a clear error for a wrong layout."""
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise SubmissionLayoutError(f"submissions folder {submissions} does not exist")
    loose = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix == ".ipynb")
    if loose:
        raise SubmissionLayoutError(
            f"{submissions} holds notebooks directly ({', '.join(loose[:3])}); expected "
            "<student>/<assignment_id>/<assignment_id>.ipynb — use `python -m autograder collect` "
            "to sort an LMS download into that layout"
        )
    found = []
    for student_dir in sorted(p for p in submissions.iterdir()
                              if p.is_dir() and not p.is_symlink() and not p.name.startswith((".", "_"))):
        for assignment_dir in sorted(p for p in student_dir.iterdir() if p.is_dir() and not p.is_symlink()):
            if assignment_dir.name in assignment_ids:
                found.append((student_dir.name, assignment_dir.name, assignment_dir))
    if not found:
        raise SubmissionLayoutError(
            f"no submissions found in {submissions}: expected folders <student>/<assignment_id>/ "
            f"with assignment_id one of {', '.join(assignment_ids)}"
        )
    return found


def lms_metadata(submissions: Path) -> dict:
    """student folder -> what ``collect`` recorded (name, LMS user id, lateness and its source)."""
    report = Path(submissions) / REPORT_NAME
    try:
        data = json.loads(report.read_text())
        return {k: v for k, v in data.get("submissions", {}).items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        return {}


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device file"),
                       (stat.S_ISBLK, "a device file"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


def safe_copy(source: Path, target: Path, notes: list[str], budget: Budget, prefix: str = "") -> None:
    """Copy regular files and folders only; say what was skipped and why."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        name = f"{prefix}{entry.name}"
        if entry.name in JUNK or entry.name.startswith("._"):
            continue
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            safe_copy(Path(entry.path), target / entry.name, notes, budget, f"{name}/")
        elif stat.S_ISREG(mode):
            if not budget.take(entry.stat(follow_symlinks=False).st_size):
                notes.append(f"skipped {name}: the submission is over {budget.limit_mb} MiB or {MAX_FILES} files")
                continue
            shutil.copyfile(entry.path, target / entry.name, follow_symlinks=False)
        else:
            notes.append(f"skipped {name}: it is {_kind(mode)}, not a regular file")


def extract_zip(archive: Path, target: Path, notes: list[str], budget: Budget, label: str) -> bool:
    """Extract ``archive`` into ``target`` within ``budget``; False (and a note) when refused."""
    try:
        with zipfile.ZipFile(archive) as handle:
            members = handle.infolist()
            declared = sum(m.file_size for m in members)
            if declared > budget.bytes or len(members) > budget.files:
                notes.append(f"{label} expands to {declared / 2**20:.0f} MiB in {len(members)} files, over the "
                             f"{budget.limit_mb} MiB / {MAX_FILES} files limit: not extracted")
                return False
            for member in members:
                if member.file_size > 2**20 and member.file_size > MAX_RATIO * max(member.compress_size, 1):
                    notes.append(f"{label} looks like a zip bomb ({member.filename} is compressed "
                                 f"{member.file_size // max(member.compress_size, 1)}:1): not extracted")
                    return False
            root = target.resolve()
            for member in members:
                parts = Path(member.filename.replace("\\", "/")).parts
                if member.filename.startswith("/") or ".." in parts or any(p in JUNK for p in parts):
                    continue
                if stat.S_ISLNK(member.external_attr >> 16):
                    notes.append(f"skipped {member.filename} in {label}: a symbolic link")
                    continue
                destination = (target / member.filename).resolve()
                if root != destination and root not in destination.parents:
                    continue
                if member.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                written = 0
                with handle.open(member) as src, open(destination, "wb") as dst:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        written += len(chunk)
                        if written > budget.bytes:  # the header lied about the size
                            break
                        dst.write(chunk)
                if not budget.take(written) or written > member.file_size:
                    destination.unlink(missing_ok=True)
                    notes.append(f"{label} holds more than it declares: extraction stopped at {member.filename}")
                    return False
        return True
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, ValueError) as error:
        notes.append(f"{label} is not a readable ZIP file ({type(error).__name__}): left as is")
        return False


def extract_archives(folder: Path, notes: list[str], budget: Budget, depth: int = 0) -> None:
    """Extract every ZIP under ``folder`` in place (archives inside archives up to MAX_ZIP_DEPTH)."""
    for archive in sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".zip" and p.is_file()):
        label = str(archive.relative_to(folder))
        budget.bytes += archive.stat().st_size  # replaced by its contents
        if depth >= MAX_ZIP_DEPTH:
            notes.append(f"{label}: archives nested more than {MAX_ZIP_DEPTH} deep are not extracted")
            continue
        inner = archive.parent / f".unzip-{archive.stem}"
        if extract_zip(archive, inner, notes, budget, label):
            archive.unlink()
            extract_archives(inner, notes, budget, depth + 1)
            for entry in list(inner.iterdir()):
                final = archive.parent / entry.name
                if final.exists():
                    final = archive.parent / f"{archive.stem}-{entry.name}"
                entry.rename(final)
            inner.rmdir()
            notes.append(f"extracted {label}")
        else:
            shutil.rmtree(inner, ignore_errors=True)


def _notebooks(folder: Path) -> list[Path]:
    return sorted((p for p in folder.rglob("*.ipynb") if not set(p.parts) & JUNK and p.is_file()),
                  key=lambda p: (len(p.parts), str(p)))


def relocate_artifacts(root: Path, search: list[Path], assignment: Assignment, notes: list[str]) -> None:
    """Move a declared artifact folder found elsewhere in the upload to where it is expected."""
    for relative in assignment.artifacts:
        expected = root / relative
        if expected.exists():
            continue
        name = Path(relative).name
        candidates = []
        for base in search:
            if base.is_dir():
                candidates += [(len(p.relative_to(base).parts), str(p.relative_to(base)), p) for p in base.rglob(name)
                               if p.is_dir() and p != expected and not set(p.relative_to(base).parts) & JUNK]
        if not candidates:
            continue
        _, where, best = min(candidates)
        expected.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(best), str(expected))
        notes.append(f"found {relative} at {where}: moved it to {relative} and graded it from there")


def shadowing(destination: Path) -> list[str]:
    """Remove submitted .py files / packages whose names would shadow an installed module."""
    notes = []
    for entry in sorted(destination.iterdir()):
        if entry.is_file() and entry.suffix == ".py":
            name = entry.stem
        elif entry.is_dir() and (entry / "__init__.py").exists():
            name = entry.name
        else:
            continue
        if name in sys.stdlib_module_names or name in ("autograder", "helpers") or importlib.util.find_spec(name):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            notes.append(f"removed {entry.name} from the submission: it would replace the {name} module")
    return notes


def place_submission(folder: Path, assignment: Assignment, destination: Path,
                     budget: Budget | None = None) -> tuple[Path | None, str | None, list[str]]:
    """Copy the submission into ``destination``; returns (notebook path or None, reason unusable, notes)."""
    notes: list[str] = []
    budget = budget or Budget()
    staging = destination.parent / f".{destination.name}.incoming"
    shutil.rmtree(staging, ignore_errors=True)
    safe_copy(folder, staging, notes, budget)
    extract_archives(staging, notes, budget)
    for stamp in staging.rglob("timestamp.txt"):
        stamp.unlink()
        notes.append("ignored the uploaded timestamp.txt: the submission time comes from the LMS")
    expected_name = f"{assignment.id}.ipynb"
    notebooks = _notebooks(staging)
    named = [p for p in notebooks if p.name == expected_name]
    if named:
        notebook = named[0]
        if len(named) > 1:
            notes.append(f"{len(named)} copies of {expected_name}: graded {notebook.relative_to(staging)}")
    elif len(notebooks) == 1:
        notebook = notebooks[0]
    elif not notebooks:
        shutil.rmtree(staging, ignore_errors=True)
        return None, f"no notebook found: submit {expected_name}", notes
    else:
        top = [p for p in notebooks if p.parent == notebooks[0].parent]
        if len(top) == 1:
            notebook = top[0]
        else:
            shutil.rmtree(staging, ignore_errors=True)
            names = ", ".join(str(p.relative_to(staging)) for p in notebooks[:5])
            return None, f"several notebooks ({names}) and none named {expected_name}: submit exactly one", notes
    if notebook.parent != staging:
        notes.append(f"the notebook was in {notebook.parent.relative_to(staging)}/: graded from there")
    if notebook.name != expected_name:
        notes.append(f"graded {notebook.name} as {expected_name}")
    shutil.rmtree(destination, ignore_errors=True)
    shutil.move(str(notebook.parent), str(destination))
    if (destination / notebook.name) != destination / expected_name:
        (destination / notebook.name).rename(destination / expected_name)
    relocate_artifacts(destination, [destination, staging], assignment, notes)
    shutil.rmtree(staging, ignore_errors=True)
    notes += shadowing(destination)
    expected = destination / expected_name
    notes += _fill_missing_fields(expected)
    try:
        nbformat.validate(nbformat.read(expected, as_version=4))
    except Exception as error:  # not JSON, not a notebook, wrong schema
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return None, (f"{assignment.id}.ipynb is not a valid Jupyter notebook ({reason}); re-download it from "
                      "Jupyter/Colab"), notes
    return expected, None, notes


def _fill_missing_fields(path: Path) -> list[str]:
    """Cells without ``metadata`` (or outputs, source) -- some editors and scripts drop them --
    get empty ones instead of failing validation; says how many."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return []
    fixed = 0
    for cell in data["cells"]:
        if not isinstance(cell, dict):
            continue
        before = len(cell)
        cell.setdefault("metadata", {})
        cell.setdefault("source", "")
        if cell.get("cell_type") == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
        fixed += len(cell) != before
    missing_top = [key for key in ("metadata", "nbformat", "nbformat_minor") if key not in data]
    data.setdefault("metadata", {})
    data.setdefault("nbformat", 4)
    data.setdefault("nbformat_minor", 4)
    if not fixed and not missing_top:
        return []
    path.write_text(json.dumps(data))
    return [f"the notebook had {fixed} cell(s) without metadata/outputs and no {', '.join(missing_top)}: filled in"
            if missing_top else f"the notebook had {fixed} cell(s) without metadata or outputs: filled in and graded"]


def submission_time(folder: Path, notebook_name: str, lms: dict | None = None) -> tuple[datetime | None, bool | None, str]:
    """(when, late flag from the LMS or None, where that came from). A timestamp.txt uploaded by
    the student is never used."""
    lms = lms or {}
    when = None
    if lms.get("submitted_at"):
        try:
            when = datetime.fromisoformat(str(lms["submitted_at"]).replace("Z", "+00:00"))
            when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        except ValueError:
            when = None
    late = lms.get("late") if isinstance(lms.get("late"), bool) else None
    if when is not None or late is not None:
        return when, late, str(lms.get("timestamp_source") or "LMS metadata")
    notebooks = [folder / notebook_name] if (folder / notebook_name).exists() else sorted(folder.glob("*.ipynb"))
    if notebooks:
        return (datetime.fromtimestamp(notebooks[0].stat().st_mtime, tz=timezone.utc), None,
                "file modification time")
    return None, None, ""
