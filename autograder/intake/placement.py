"""From a student's folder to something gradable: layout checks, safe copies, archives, artifacts.

Everything here turns an odd upload into a feedback line rather than a zero:

- only regular files and folders are copied (symbolic links, FIFOs, sockets and device files are
  skipped with a note; a FIFO would otherwise block the copy forever);
- ZIP archives in the submission (the ``helpers.submission.pack`` zip, an ``artifacts.zip``) are
  extracted by :mod:`autograder.intake.archives` with limits on size, file count, nesting and
  expansion ratio across nesting (a zip bomb is refused, not expanded), member by member and the
  notebook first: refused artifacts cost the checks that need them, never the notebook;
- what ``collect`` said about the upload (which file it graded, which it set aside) is added
  to the feedback;
- a notebook wrapped in one or more folders, or under another name, is found and graded;
- a declared artifact folder one level deeper (``<id>/artifacts/...``, ``artifacts/artifacts/...``)
  is moved to where the notebook expects it, with a note;
- ``.py`` files that would shadow a module are dropped; other ``.py`` files get a line (the
  notebook cannot import them);
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
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from autograder.intake.archives import (  # noqa: F401  (Budget and the limits are imported from here too)
    JUNK,
    MAX_BYTES,
    MAX_FILES,
    MAX_RATIO,
    MAX_ZIP_DEPTH,
    Budget,
    extract_archives,
)
from autograder.intake.names import Namer
from autograder.manifest import Assignment
from autograder.outcome import SubmissionLayoutError

REPORT_NAME = "_collect_report.json"


def discover(submissions: Path, assignment_ids: list[str]) -> list[tuple[str, str, Path]]:
    """(student, assignment, folder) for every submission; a clear error for a wrong layout."""
    submissions = Path(submissions)
    if submissions.is_file():
        kind = "a ZIP file (an LMS download?)" if zipfile.is_zipfile(submissions) else "a file, not a folder"
        raise SubmissionLayoutError(
            f"{submissions} is {kind}: run `python -m autograder collect {submissions} --assignment ID --out "
            "SUBMISSIONS` first, then `python -m autograder autograde SUBMISSIONS ...`")
    if not submissions.is_dir():
        raise SubmissionLayoutError(f"submissions folder {submissions} does not exist: give the folder that "
                                    "`python -m autograder collect` wrote (<student>/<assignment_id>/...)")
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


def collect_notes(folder: Path) -> list[str]:
    """What ``collect`` said about this submission (``SUBMISSIONS/<student>/<assignment>``):
    which upload it graded and which it set aside, what it refused and renamed. These lines go
    into the student's feedback."""
    folder = Path(folder)
    try:
        data = json.loads((folder.parent.parent / REPORT_NAME).read_text())
        notes = data.get("intake_notes", {}).get(folder.parent.name, {}).get(folder.name, [])
    except (OSError, ValueError, AttributeError):
        return []
    return [str(line) for line in notes] if isinstance(notes, list) else []


def lms_metadata(submissions: Path) -> dict:
    """student folder -> what ``collect`` recorded (name, LMS user id, lateness and its source; per assignment, the
    graded upload's name in the download under ``by_assignment``)."""
    report = Path(submissions) / REPORT_NAME
    try:
        data = json.loads(report.read_text())
        per_assignment = data.get("by_assignment") if isinstance(data.get("by_assignment"), dict) else {}
        return {k: {**v, "by_assignment": per_assignment.get(k, {})}
                for k, v in data.get("submissions", {}).items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        return {}


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device file"),
                       (stat.S_ISBLK, "a device file"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


def safe_copy(source: Path, target: Path, notes: list[str], budget: Budget, prefix: str = "",
              portable: bool = False) -> None:
    """Copy regular files and folders only; say what was skipped and why. Notebooks are copied
    first, so one is never left out because what came with it used up the budget. ``portable``:
    names every system can hold (see :mod:`autograder.intake.names`), with a note per rename."""

    def copy_tree(source: Path, target: Path, prefix: str, notebooks: bool) -> None:
        target.mkdir(parents=True, exist_ok=True)
        entries = [e for e in sorted(os.scandir(source), key=lambda e: e.name)
                   if e.name not in JUNK and not e.name.startswith("._")]
        namer = Namer()
        for entry in entries:
            name = f"{prefix}{entry.name}"
            final = namer.claim(entry.name) if portable else entry.name
            if final != entry.name and not notebooks:
                notes.append(f"saved {name} as {prefix}{final} (a name that not every system can hold)")
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                copy_tree(Path(entry.path), target / final, f"{name}/", notebooks)
            elif stat.S_ISREG(mode):
                if entry.name.lower().endswith(".ipynb") != notebooks:
                    continue
                size = entry.stat(follow_symlinks=False).st_size
                if not budget.take(size, force=entry.name.lower().endswith(".zip")):  # its members are measured
                    notes.append(f"skipped {name} ({size / 2**20:.1f} MiB): the submission is over "
                                 f"{budget.limit_mb} MiB or {budget.limit_files} files")
                    continue
                shutil.copyfile(entry.path, target / final, follow_symlinks=False)
            elif not notebooks:
                notes.append(f"skipped {name}: it is {_kind(mode)}, not a regular file")

    copy_tree(source, target, prefix, notebooks=True)
    copy_tree(source, target, prefix, notebooks=False)


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
    notes: list[str] = collect_notes(folder)
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
    notes += [f"{p.relative_to(destination)}: a .py file is not used in grading (the notebook cannot import it); "
              "the notebook must hold all its code" for p in sorted(destination.rglob("*.py"))]
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


def submission_time(folder: Path, notebook_name: str,
                    lms: dict | None = None) -> tuple[datetime | None, bool | None, str]:
    """(when, late flag from the LMS or None, where that came from). A timestamp.txt uploaded by
    the student is never used."""
    lms = lms or {}
    when = None
    if lms.get("submitted_at"):
        try:
            when = datetime.fromisoformat(str(lms["submitted_at"]).replace("Z", "+00:00"))
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
        except ValueError:
            when = None
    late = lms.get("late") if isinstance(lms.get("late"), bool) else None
    if when is not None or late is not None:
        return when, late, str(lms.get("timestamp_source") or "LMS metadata")
    # wherever the notebook sits (a subfolder, only inside the pack zip): the newest upload counts, so
    # that late work is late however it was packed (a student's timestamp.txt is never read)
    uploads = [p for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink() and p.name != "timestamp.txt"]
    if uploads:
        newest = max(p.stat().st_mtime for p in uploads)
        return datetime.fromtimestamp(newest, tz=UTC), None, "file modification time"
    return None, None, ""
