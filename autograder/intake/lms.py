"""``python -m autograder collect ZIP --assignment ID --out DIR``: sort an LMS download into
``DIR/<student>/<ID>/<ID>.ipynb`` (+ artifact folders beside it).

Understood layouts (a ZIP file or an already-extracted folder; wrapping folders are skipped):

- Canvas "Download submissions": flat files ``<login>[_late]_<userid>_<submissionid>_<name>``
  (Canvas appends ``-1``, ``-2`` to a name uploaded again). Lateness: Canvas's own ``_late`` flag.
- Moodle "Download all submissions": folders (or flat files)
  ``<Full Name>_<participant id>_assignsubmission_file_[<name>]``.
- Gradescope "Export submissions": ``submission_<id>/`` folders and ``submission_metadata.yml``
  (student = the submitter's SID, else e-mail name, else name; ``:created_at`` is the time).
- A plain folder of ``<student>.ipynb`` files, or of ``<student>/`` folders.

Nothing is lost and nothing is overwritten or deleted without a line:

- re-uploads: of two uploads of one name (``x.ipynb``, Canvas's ``x-1.ipynb``, ``x-2.ipynb``)
  the newest by upload time is graded (the download's ZIP entry times, more than a minute apart),
  else the newest by Canvas's numbering (its upload ids, then its ``-N`` copies); of notebooks
  under different names the newest by upload time. The others go to
  ``DIR/_set_aside/<student>/<ID>/``; uploads that cannot be ordered all stay. The student's
  notes (which reach the feedback) and the report say which file was graded and which set aside;
- an upload that cannot be placed goes to ``DIR/_unmatched/`` and is listed with the reason (a
  ``.py`` file too: the grader runs the notebook only); a folder an earlier collect wrote is
  replaced with a line saying so;
- archives (the download itself and every ZIP a student uploaded, nested ones included) go
  through :mod:`autograder.intake.archives`: limits on total bytes, file count, nesting depth and
  expansion ratio across nesting, a line per refused member, the notebook extracted first;
- every folder and file name is one Windows, macOS and Linux can hold (no ``con``/``aux``/``nul``,
  no trailing dots or spaces, unique regardless of case), and nothing is written outside
  ``--out``; two people whose names sanitise alike get two folders and a line in the report;
- links, FIFOs and device files are skipped with a note; a ``timestamp.txt`` a student uploaded
  is dropped (it never decides lateness). ZIP entry times are the local time of whoever made the
  ZIP, without a zone: they order uploads and are shown as such, never as a UTC submission time.

``DIR/_collect_report.json`` keeps, per folder, the name as the LMS spells it, the LMS user id,
the lateness and where it came from (``submissions``: the latest collect of that folder, any
assignment), the same per folder and assignment (``by_assignment``), and per folder and
assignment the notes for the student (``intake_notes``, read by ``autograde`` into the
feedback). Collecting several downloads into one DIR merges their reports.
"""
from __future__ import annotations

import contextlib
import filecmp
import json
import os
import re
import shutil
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from autograder.intake.archives import JUNK, MAX_BYTES, Budget, extract_archives, extract_zip
from autograder.intake.names import Namer, fold, is_reserved
from autograder.intake.placement import REPORT_NAME, safe_copy

CANVAS = re.compile(r"^(?P<login>[^_/\\]+?)(?P<late>_late|_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<name>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
GRADESCOPE = re.compile(r"^submission_\d+$")
CANVAS_COPY = re.compile(r"^(?P<base>.+)-(?P<n>\d+)(?P<ext>\.[^.]+)$")
DOWNLOAD_MAX_BYTES = 4096 * 2**20
DOWNLOAD_MAX_FILES = 10**6
SAME_TIME_SECONDS = 60
"""Uploads closer in time than this cannot be ordered by time (one submission's files)."""
ZIP_TIME = "ZIP entry time (local time of whoever made the download, no time zone)"
SET_ASIDE = "_set_aside"
UNMATCHED = "_unmatched"


@dataclass
class CollectReport:
    students: dict = field(default_factory=dict)
    """folder -> list of files placed (relative to the student's assignment folder)."""
    unmatched: list = field(default_factory=list)
    """(path in the download, why) for everything that could not be attributed or placed."""
    ignored: list = field(default_factory=list)
    format: str = ""
    submissions: dict = field(default_factory=dict)
    """folder -> {name, lms, user_id, late, submitted_at, timestamp_source, notes, ...}."""
    collisions: list = field(default_factory=list)
    """One sentence per pair of people whose names sanitise alike (kept apart)."""
    set_aside: list = field(default_factory=list)
    """(where it was kept, why) for every upload not graded because a newer one was."""
    replaced: list = field(default_factory=list)
    """One sentence per file or folder an earlier collect wrote that this one replaced."""
    renamed: list = field(default_factory=list)
    """(name in the download, name written) where a name could not be kept as it was."""

    def lines(self) -> list[str]:
        out = [f"format: {self.format}; {len(self.students)} student(s)"]
        for student, files in sorted(self.students.items()):
            meta = self.submissions.get(student, {})
            notebooks = [f for f in files if f.endswith(".ipynb")]
            warn = "" if len(notebooks) == 1 else f"  <- {len(notebooks)} notebooks"
            origin = f" <- {meta.get('name')!r}" if meta.get("name") and meta.get("name") != student else ""
            ident = f" (id {meta['user_id']})" if meta.get("user_id") else ""
            late = f"; late per {meta.get('timestamp_source')}" if meta.get("late") else ""
            uploaded = f"; uploaded {meta['upload_time']} ({ZIP_TIME})" if meta.get("upload_time") else ""
            out.append(f"  {student}{origin}{ident}: {len(files)} file(s){late}{uploaded}{warn}")
            for note in meta.get("notes", []):
                out.append(f"      {note}")
        for line in self.collisions:
            out.append(f"collision: {line}")
        for path, why in self.set_aside:
            out.append(f"set aside: {path} ({why})")
        for before, after in self.renamed:
            out.append(f"renamed: {before} -> {after} (a name that not every system can hold)")
        for line in self.replaced:
            out.append(f"replaced: {line}")
        for path, why in self.unmatched:
            out.append(f"unmatched: {path} ({why})")
        return [printable(line) for line in out]


def printable(text: str) -> str:
    """``text`` with control and format characters written as escapes (``\\x1b``, ``\\u202e``):
    names in a download are the students', and an escape sequence printed raw would retitle the
    grader's terminal or erase the report's earlier lines (a refusal, say); a bidi override would
    show a name reversed."""
    return "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf") else ascii(ch)[1:-1] for ch in text)


def sanitize(text: str) -> str:
    """A readable folder name: ASCII letters/digits, ``_ . -``; never empty, never ``.``/``..``."""
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^A-Za-z0-9_.@-]+", "_", text.strip()).strip("._-")
    text = re.sub(r"\.{2,}", ".", text)
    text = text[:80] or "unnamed"
    return f"{text}_" if is_reserved(text) else text


def _slug(text: str) -> str:
    slug = sanitize(text).replace(".", "_").replace("@", "_").lower().strip("_") or "unnamed"
    return f"{slug}_" if is_reserved(slug) else slug


@dataclass
class _Upload:
    name: str
    """Where it is in the student's scratch folder (top level)."""
    label: str
    """Its path in the download, for the report."""
    base: str
    """Its name without Canvas's ``-N``: uploads of one base are versions of one file."""
    number: int = 0
    """Canvas's copy number (``x-2.ipynb`` -> 2; ``x.ipynb`` -> 0): the student's file name may hold one too."""
    time: datetime | None = None
    lms_id: int = 0
    """The LMS's own id of the upload (Canvas's attachment id, which grows with every upload); 0 if none."""


@dataclass
class _Student:
    identity: tuple
    name: str
    lms: str
    user_id: str = ""
    preferred: str = ""
    late: bool | None = None
    submitted_at: str | None = None
    timestamp_source: str = ""
    folder: Path | None = None
    notes: list = field(default_factory=list)
    budget: Budget | None = None
    uploads: list = field(default_factory=list)
    namer: Namer = field(default_factory=Namer)
    times: dict = field(default_factory=dict)
    """Relative path in the scratch folder -> ZIP entry time (naive, local)."""
    assigned: str = ""


class _Collector:
    def __init__(self, assignment: str, out: Path, previous: dict, max_bytes: int, times: dict, base: Path):
        self.assignment, self.out = assignment, out
        self.report = CollectReport()
        self.scratch = Path(tempfile.mkdtemp(prefix="collect-"))
        self.students: dict[tuple, _Student] = {}
        self.previous = previous
        self.max_bytes = max_bytes
        self.times, self.base = times, base
        self.originals: dict[str, str] = {}
        """Saved name -> the name in the download, for what extraction renamed (set by ``_collect_root``)."""

    def student(self, identity: tuple, name: str, lms: str, user_id: str = "", preferred: str = "") -> _Student:
        if identity not in self.students:
            found = _Student(identity, name, lms, user_id, preferred or name, budget=Budget(self.max_bytes))
            found.folder = self.scratch / "students" / str(len(self.students))
            found.folder.mkdir(parents=True)
            self.students[identity] = found
        return self.students[identity]

    def _time(self, path: Path) -> datetime | None:
        try:
            stamp = self.times.get(path.relative_to(self.base).as_posix())
            return datetime(*stamp) if stamp else None
        except (ValueError, TypeError):
            return None

    def add(self, student: _Student, source: Path, relative: str | None = None, canvas: bool = False,
            lms_id: int = 0) -> None:
        """Copy one upload (a file, or a folder with ``relative='.'``) into the student's folder."""
        label = source.relative_to(self.base).as_posix() if self.base in source.parents else source.name
        label = self.originals.get(label, label)  # as the LMS named it, before extraction renamed it
        if source.is_dir() and not source.is_symlink():
            wanted = relative or source.name
            target = student.folder if relative == "." else student.folder / student.namer.claim(wanted)
            safe_copy(source, target, student.notes, student.budget, portable=True)
            for path in source.rglob("*"):
                when = self._time(path)
                if when is not None and path.is_file():
                    student.times[path.relative_to(source).as_posix()] = when
            return
        if not source.is_file() or source.is_symlink():
            student.notes.append(f"skipped {source.name}: not a regular file")
            return
        wanted = relative or source.name
        copy = CANVAS_COPY.match(wanted) if canvas else None
        base, number = (f"{copy['base']}{copy['ext']}", int(copy["n"])) if copy else (wanted, 0)
        size = source.stat().st_size
        if not student.budget.take(size, force=wanted.lower().endswith(".zip")):  # its members are measured
            student.notes.append(f"skipped {wanted} ({size / 2**20:.1f} MiB): the submission is over "
                                 f"{student.budget.limit_mb} MiB or {student.budget.limit_files} files")
            self.report.unmatched.append((label, f"over the {student.budget.limit_mb} MiB limit of a submission: "
                                                 "not collected"))
            return
        name = student.namer.claim(wanted)
        if name != wanted:
            self.report.renamed.append((label, name))
        shutil.copyfile(source, student.folder / name)
        when = self._time(source)
        if when is not None:
            student.times[name] = when
        student.uploads.append(_Upload(name, label, base, number, when, lms_id))

    def unmatched(self, path: Path, root: Path, why: str, name: str | None = None) -> str:
        """Keep ``path`` under ``--out/_unmatched/`` and list it; returns where it was kept."""
        relative = str(path.relative_to(root)) if root in path.parents else path.name
        self.report.unmatched.append((name or relative, why))
        folder = self.out / UNMATCHED
        wanted = sanitize((name or relative).replace("/", "__"))
        target = folder / wanted
        if target.exists() and not (path.is_file() and target.is_file() and filecmp.cmp(path, target, shallow=False)):
            kept = Namer(p.name for p in folder.iterdir()).claim(wanted)
            self.report.replaced.append(f"{UNMATCHED}/{wanted} from an earlier collect is kept; this upload is "
                                        f"{UNMATCHED}/{kept}")
            target = folder / kept
        if path.is_dir():
            safe_copy(path, target, [], Budget(self.max_bytes), portable=True)
        elif path.is_file() and not path.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        return f"{UNMATCHED}/{target.name}"

    def _name_for(self, student: _Student, taken: set) -> str:
        base = _slug(student.preferred)
        for key, meta in self.previous.items():  # the same person collected before keeps the folder
            if (meta.get("lms"), meta.get("user_id") or None, meta.get("name")) == (
                    student.lms, student.user_id or None, student.name) and key not in taken:
                return key
        name = base
        existing = {fold(p.name) for p in self.out.iterdir()} if self.out.is_dir() else set()
        if name in taken or fold(name) in existing or name in self.previous:
            suffix = sanitize(student.user_id).lower() if student.user_id else ""
            candidates = ([f"{base}-{suffix}"] if suffix and suffix != base else []) + \
                [f"{base}-{i}" for i in range(2, 10_000)]
            name = next(c for c in candidates if c not in taken and fold(c) not in existing)
            other = next((s for s in self.students.values() if s.assigned == base), None)
            other_name = repr(other.name) if other else "an existing folder"
            if other is not None and other.lms == student.lms and other.user_id and other.user_id == student.user_id:
                self.report.collisions.append(
                    f"{student.name!r} and {other_name} both submitted under the {student.lms} id "
                    f"{student.user_id!r} (one of them typed the other's): kept apart, {student.name!r} is in "
                    f"{name!r}; grade both, then fix the id in the LMS")
            else:
                self.report.collisions.append(f"{student.name!r} and {other_name} both sanitise to {base!r}: "
                                              f"{student.name!r} is in {name!r}")
        return name

    def finish(self) -> CollectReport:
        taken: set = set()
        for student in sorted(self.students.values(), key=lambda s: (s.preferred, s.name, s.user_id)):
            name = self._name_for(student, taken)
            taken.add(name)
            student.assigned = name
            self._finish_student(student, name)
        shutil.rmtree(self.scratch, ignore_errors=True)
        return self.report

    def _set_aside(self, student: _Student, path: Path, why: str) -> str:
        """Move ``path`` (in the student's scratch folder) to ``--out/_set_aside/<student>/<id>/``."""
        folder = self.out / SET_ASIDE / student.assigned / self.assignment
        folder.mkdir(parents=True, exist_ok=True)
        kept = Namer(p.name for p in folder.iterdir()).claim(path.name)
        shutil.move(str(path), str(folder / kept))
        where = f"{SET_ASIDE}/{student.assigned}/{self.assignment}/{kept}"
        self.report.set_aside.append((where, why))
        return where

    def _finish_student(self, student: _Student, name: str) -> None:
        folder = student.folder
        destination = self.out / name / self.assignment
        if self.out.resolve() not in destination.resolve().parents:  # never outside --out
            raise ValueError(f"refusing to write {destination} outside {self.out}")
        earlier = self.out / SET_ASIDE / name / self.assignment
        if earlier.exists():  # this collect decides afresh what is set aside
            count = sum(1 for p in earlier.rglob("*") if p.is_file())
            shutil.rmtree(earlier)
            self.report.replaced.append(f"{SET_ASIDE}/{name}/{self.assignment}/ ({count} file(s)) from an earlier "
                                        "collect of this student and assignment")
        self._resolve_reuploads(student)
        extract_archives(folder, student.notes, student.budget)
        for stamp in folder.rglob("timestamp.txt"):
            stamp.unlink()
            student.notes.append("dropped the uploaded timestamp.txt: lateness comes from the LMS")
        for script in sorted(folder.rglob("*.py")):
            relative = script.relative_to(folder).as_posix()
            kept = self.unmatched(script, folder, "a .py upload: the grader runs the notebook only",
                                  name=f"{name}/{self.assignment}/{relative}")
            script.unlink()
            student.notes.append(f"{relative} was not kept with the notebook: grading runs the notebook only, so "
                                 f"its code must be in the notebook (the course staff have it in {kept})")
        self._choose_notebook(student)
        notebooks = _notebooks(folder)
        if len(notebooks) == 1 and notebooks[0].parent != folder:
            _hoist(notebooks[0].parent, folder)
            notebooks = [folder / notebooks[0].name]
        if destination.exists():
            count = sum(1 for p in destination.rglob("*") if p.is_file())
            shutil.rmtree(destination)
            self.report.replaced.append(f"{name}/{self.assignment}/ ({count} file(s)) from an earlier collect")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(folder, destination, ignore=shutil.ignore_patterns(*JUNK), symlinks=True)
        graded = next((u.label for u in student.uploads if len(notebooks) == 1 and u.name == notebooks[0].name), "")
        if len(notebooks) == 1 and notebooks[0].name != f"{self.assignment}.ipynb":
            (destination / notebooks[0].name).rename(destination / f"{self.assignment}.ipynb")
            student.notes.append(f"graded {notebooks[0].name} as {self.assignment}.ipynb")
        self.report.students[name] = sorted(str(p.relative_to(destination)) for p in destination.rglob("*")
                                            if p.is_file())
        times = [u.time for u in student.uploads if u.time is not None] or \
            [t for t in student.times.values() if t is not None]
        self.report.submissions[name] = {
            "name": student.name, "lms": student.lms, "user_id": student.user_id, "late": student.late,
            "submitted_at": student.submitted_at, "timestamp_source": student.timestamp_source,
            "upload_time": max(times).isoformat(timespec="seconds") if times else None,
            "upload_time_source": ZIP_TIME if times else None,
            "assignment": self.assignment, "notes": student.notes,
            # the graded notebook's path in the download, as the LMS named it: `return` names the feedback so
            "graded_upload": graded}
        if not notebooks:
            self.report.unmatched.append((f"{name}/", "no notebook among this student's files"))

    def _resolve_reuploads(self, student: _Student) -> None:
        """Of several uploads of one file (Canvas's ``x``, ``x-1``, ``x-2``), keep the newest and
        set the others aside; uploads with no order between them all stay."""
        groups: dict[str, list[_Upload]] = {}
        for upload in student.uploads:
            groups.setdefault(fold(upload.base), []).append(upload)
        for uploads in groups.values():
            if len(uploads) < 2:
                continue
            key = _order_key(uploads)
            if key is None:
                names = ", ".join(u.name for u in uploads)
                student.notes.append(f"{len(uploads)} uploads of {uploads[0].base} ({names}) with no order between "
                                     "them (same Canvas number, no upload times a minute apart): all kept")
                continue
            ordered = sorted(uploads, key=key)
            newest, older = ordered[-1], ordered[:-1]
            how = "Canvas's numbering" if key is _by_number else "upload time"
            kept = [self._set_aside(student, student.folder / u.name, f"an older upload than {newest.label}")
                    for u in older]
            target = student.folder / newest.base
            if newest.name != newest.base and not target.exists():
                (student.folder / newest.name).rename(target)
                when = student.times.pop(newest.name, None)
                if when is not None:
                    student.times[newest.base] = when
            student.notes.append(f"you uploaded {newest.base} {len(uploads)} times: graded {newest.name}, the newest "
                                 f"by {how}; set aside {', '.join(u.name for u in older)} (kept by the course staff "
                                 f"in {', '.join(kept)})")

    def _choose_notebook(self, student: _Student) -> None:
        """Several notebooks under different names: grade the newest by upload time when the
        times are over a minute apart; otherwise keep them all and say which one is graded."""
        folder = student.folder
        notebooks = _notebooks(folder)
        if len(notebooks) < 2:
            return
        expected = f"{self.assignment}.ipynb"
        timed = [(student.times.get(p.relative_to(folder).as_posix()), p) for p in notebooks]
        if all(when is not None for when, _ in timed):
            timed.sort(key=lambda item: item[0])
            (last_time, last), (before_time, _) = timed[-1], timed[-2]
            if (last_time - before_time).total_seconds() > SAME_TIME_SECONDS:
                shown = ", ".join(p.relative_to(folder).as_posix() for _, p in timed[:-1])
                kept = [self._set_aside(student, p, f"an older notebook than {last.relative_to(folder).as_posix()}")
                        for _, p in timed[:-1]]
                graded = last.relative_to(folder).as_posix()
                student.notes.append(f"{len(notebooks)} notebooks uploaded: graded {graded}, the newest by upload "
                                     f"time ({last_time:%Y-%m-%d %H:%M}, {ZIP_TIME}); set "
                                     f"aside {shown} (kept by the course staff in {', '.join(kept)})")
                return
        names = ", ".join(p.relative_to(folder).as_posix() for p in notebooks)
        named = [p for p in notebooks if p.name == expected]
        top = [p for p in notebooks if p.parent == notebooks[0].parent]
        graded = named[0] if named else (top[0] if len(top) == 1 else None)
        if graded is not None:
            student.notes.append(f"{len(notebooks)} notebooks uploaded with no order between them ({names}): all "
                                 f"kept; {graded.relative_to(folder).as_posix()} is graded"
                                 + (" (its name)" if named else " (the only one at the top)"))
        else:
            student.notes.append(f"{len(notebooks)} notebooks uploaded with no order between them ({names}) and "
                                 f"none named {expected}: none can be graded; resubmit exactly one")


def _by_number(upload: _Upload):
    return upload.lms_id, upload.number


def _order_key(uploads: list[_Upload]):
    """How versions of one file are ordered: the LMS's upload times when they are all known and over
    a minute apart; else Canvas's numbering (its upload ids, then its ``-N`` copies) when that tells
    them all apart; None when neither orders them. A ``-N`` a student typed into a file name never
    beats the upload time."""
    times = sorted(u.time for u in uploads if u.time is not None)
    apart = all((b - a).total_seconds() > SAME_TIME_SECONDS for a, b in zip(times, times[1:], strict=False))
    if len(times) == len(uploads) and apart:
        return lambda u: u.time
    if len({_by_number(u) for u in uploads}) == len(uploads):
        return _by_number
    return None


def _notebooks(folder: Path) -> list[Path]:
    return sorted((p for p in folder.rglob("*.ipynb") if not set(p.relative_to(folder).parts) & JUNK),
                  key=lambda p: (len(p.parts), str(p)))


def _hoist(inner: Path, root: Path) -> None:
    """Move everything in ``inner`` (the notebook's folder) up into ``root``, keeping what is there."""
    namer = Namer(p.name for p in root.iterdir())
    for entry in list(inner.iterdir()):
        wanted = entry.name if fold(entry.name) not in namer.taken else f"{inner.name}-{entry.name}"
        entry.rename(root / namer.claim(wanted))
    try:
        inner.rmdir()
        parent = inner.parent
        while parent != root and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    except OSError:
        pass


def _read_gradescope_metadata(path: Path) -> dict:
    """submission folder -> (sid/email/name, display name, created_at) from submission_metadata.yml."""
    try:
        import yaml

        data = yaml.safe_load(path.read_text()) or {}
    except Exception:
        return {}
    found = {}
    for key, value in (data.items() if isinstance(data, dict) else []):
        if not isinstance(value, dict):
            continue
        submitters = value.get(":submitters") or value.get("submitters") or []
        first = submitters[0] if submitters and isinstance(submitters[0], dict) else {}
        student = (first.get(":sid") or (first.get(":email") or "").split("@")[0] or first.get(":name") or key)
        created = value.get(":created_at") or value.get("created_at")
        found[str(key)] = (str(student), str(first.get(":name") or student), str(created) if created else None)
    return found


def _iso(text: str | None) -> str | None:
    if not text:
        return None
    try:
        from nbgrader.utils import parse_utc

        return parse_utc(text).replace(tzinfo=UTC).isoformat(timespec="seconds")
    except Exception:
        return None


def _previous_report(out: Path) -> dict:
    try:
        data = json.loads((out / REPORT_NAME).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def collect(download: Path, assignment: str, out: Path, max_mb: int | None = None) -> CollectReport:
    download, out = Path(download), Path(out)
    if not download.exists():
        raise ValueError(f"{download} does not exist")
    if download.is_file() and not zipfile.is_zipfile(download):
        if Path(download).suffix == ".ipynb":
            raise ValueError(f"{download} is neither a folder nor a ZIP file: it is one notebook, not an LMS "
                             "download: put it in a folder named after the "
                             f"student (e.g. DOWNLOAD/<student>.ipynb) and collect the folder, or place it yourself as "
                             f"SUBMISSIONS/<student>/{assignment}/{assignment}.ipynb and run autograde")
        raise ValueError(f"{download} is neither a folder nor a ZIP file")
    student_bytes = (max_mb * 2**20) if max_mb else MAX_BYTES
    download_bytes = max(student_bytes, DOWNLOAD_MAX_BYTES)  # the whole class; each student has student_bytes
    with tempfile.TemporaryDirectory(prefix="lms-") as scratch:
        times: dict[str, tuple] = {}
        skipped: list[tuple[str, str]] = []
        renamed: list[tuple[str, str]] = []
        if download.is_file():
            base = Path(scratch)
            extraction = extract_zip(download, base, Budget(download_bytes, DOWNLOAD_MAX_FILES, max_depth=1),
                                     label=download.name, nested=False)
            prefix = f"{download.name}!"
            skipped = [(path.removeprefix(prefix), why) for path, why in extraction.refused]
            renamed = [(path.removeprefix(prefix), name) for path, name in extraction.renamed]
            times = extraction.times
        else:
            base = download
        root = base
        entries = [p for p in root.iterdir() if p.name not in JUNK]
        while (len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink()
               and not _one_submission(entries[0])):
            root = entries[0]  # a wrapping folder ("submissions/")
            entries = [p for p in root.iterdir() if p.name not in JUNK]
        with staged(out) as staging:
            report = _collect_root(_Unpacked(base, root, entries, times, skipped, renamed), assignment, staging,
                                   student_bytes)
    return report


@contextlib.contextmanager
def staged(out: Path):
    """A copy of ``out`` to collect into, which replaces ``out`` only when the collect finished: a collect
    that fails half-way (a full disk, a bug) leaves ``out`` as it was and no folder behind. Earlier
    submissions are hard-linked into the copy (collect replaces files, never rewrites them); the
    top-level files, which it does rewrite, are copied."""
    staging, replaced = out.parent / f".{out.name}.collecting", out.parent / f".{out.name}.replaced"
    for leftover in (staging, replaced):  # an interrupted earlier run
        shutil.rmtree(leftover, ignore_errors=True)
    if out.exists():
        shutil.copytree(out, staging, symlinks=True, copy_function=_linked_below(out))
    else:
        staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        out.rename(replaced)
    staging.rename(out)
    shutil.rmtree(replaced, ignore_errors=True)


def _linked_below(out: Path):
    def copy(source: str, destination: str) -> None:
        if Path(source).parent == out:
            shutil.copy2(source, destination)
            return
        try:
            os.link(source, destination)
        except OSError:
            shutil.copy2(source, destination)
    return copy


@dataclass
class _Unpacked:
    """The download as read: where it lies (an extracted ZIP's folder, or the download itself), its
    folder of submissions and what that holds, the upload times the ZIP recorded, and what the
    extraction refused or renamed."""
    base: Path
    root: Path
    entries: list[Path]
    times: dict
    skipped: list
    renamed: list


def _one_submission(folder: Path) -> bool:
    """True for a single student's folder (LMS-named, or exactly one notebook and no LMS names)."""
    if MOODLE.match(folder.name) or GRADESCOPE.match(folder.name):
        return True
    names = [p.name for p in folder.iterdir()]
    if "submission_metadata.yml" in names or any(CANVAS.match(n) or MOODLE.match(n) or GRADESCOPE.match(n)
                                                 for n in names):
        return False
    return len([n for n in names if n.endswith(".ipynb")]) == 1


def _collect_root(unpacked: _Unpacked, assignment: str, out: Path, max_bytes: int) -> CollectReport:
    root, entries = unpacked.root, unpacked.entries
    previous_report = _previous_report(out)
    previous = {k: v for k, v in previous_report.get("submissions", {}).items() if isinstance(v, dict)}
    collector = _Collector(assignment, out, previous, max_bytes, unpacked.times, unpacked.base)
    report = collector.report
    report.unmatched.extend(unpacked.skipped)
    report.renamed.extend(unpacked.renamed)
    report.ignored = sorted(p.name for p in root.iterdir() if p.name in JUNK)
    metadata_file = root / "submission_metadata.yml"
    gradescope = _read_gradescope_metadata(metadata_file) if metadata_file.exists() else {}
    formats = set()
    # the names as the LMS wrote them (extraction saved some under portable names): identities and the LMS names
    # recorded for lms_grades.csv, the Canvas import and the return ZIP come from these, byte for byte
    originals = {after: before for before, after in unpacked.renamed}
    collector.originals = originals
    for entry in sorted(entries):
        if entry == metadata_file:
            continue
        shown = originals.get(entry.relative_to(root).as_posix(), entry.name)
        if entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
            report.unmatched.append((entry.name, "not a regular file or folder: skipped"))
        elif entry.is_dir():
            _collect_folder(collector, entry, root, gradescope, formats, shown)
        else:
            _collect_file(collector, entry, root, assignment, formats, shown)
    report.format = "+".join(sorted(formats)) or "unknown"
    collector.finish()
    _write_report(out, assignment, report, previous, previous_report)
    return report


def _collect_folder(collector, entry: Path, root: Path, gradescope: dict, formats: set, shown: str = "") -> None:
    """A student's folder: Gradescope's or Moodle's naming, else a plain folder holding a notebook (``shown``: its
    name in the download, before extraction made it portable)."""
    name = shown or entry.name
    if GRADESCOPE.match(name):
        formats.add("gradescope")
        sid, display, created = gradescope.get(name, (name, name, None))
        # a student who typed a classmate's SID is another person: never merged into the classmate
        student = collector.student(("gradescope", sid, display), display, "gradescope", sid, preferred=sid)
        if created:
            student.submitted_at = _iso(created)
            student.timestamp_source = "gradescope submission_metadata.yml"
        collector.add(student, entry, ".")
    elif MOODLE.match(name):
        formats.add("moodle")
        m = MOODLE.match(name)
        student = collector.student(("moodle", m["id"]), m["name"], "moodle", m["id"],
                                    preferred=f"{m['name']}_{m['id']}")
        collector.add(student, entry, ".")
    elif any(entry.rglob("*.ipynb")):
        formats.add("folders")
        collector.add(collector.student(("folders", name), name, "folders"), entry, ".")
    else:
        collector.unmatched(entry, root, "a folder with no notebook and no LMS naming")


def _collect_file(collector, entry: Path, root: Path, assignment: str, formats: set, shown: str = "") -> None:
    """One uploaded file: Moodle's or Canvas's naming, else a plain notebook named after its student (``shown``: its
    name in the download: who it is; the file is copied under the name it was saved as)."""
    name, shown = entry.name, shown or entry.name
    m, who = MOODLE.match(name), MOODLE.match(shown)
    if m and m["rest"] and who:
        formats.add("moodle")
        student = collector.student(("moodle", who["id"]), who["name"], "moodle", who["id"],
                                    preferred=f"{m['name']}_{m['id']}")
        collector.add(student, entry, m["rest"])
        return
    m, who = CANVAS.match(name), CANVAS.match(shown)
    if m and who:
        formats.add("canvas")
        student = collector.student(("canvas", who["uid"]), who["login"], "canvas", who["uid"], preferred=m["login"])
        if m["late"]:
            student.late = True
            student.timestamp_source = "canvas _late flag"
        elif student.late is None:
            student.late = False
            student.timestamp_source = "canvas (no _late flag)"
        collector.add(student, entry, m["name"], canvas=True, lms_id=int(m["sid"]))
    elif entry.suffix == ".ipynb":
        formats.add("plain")
        who = Path(shown).stem
        collector.add(collector.student(("plain", who), who, "plain", preferred=entry.stem), entry,
                      f"{assignment}.ipynb")
    else:
        collector.unmatched(entry, root, "file name matches no LMS convention")


def _write_report(out: Path, assignment: str, report: CollectReport, previous: dict, previous_report: dict) -> None:
    """OUT/_collect_report.json, merged with what earlier collects (other assignments too) recorded."""
    merged = {**previous, **report.submissions}
    notes = previous_report.get("intake_notes", {}) if isinstance(previous_report.get("intake_notes"), dict) else {}
    by_assignment = previous_report.get("by_assignment", {})
    by_assignment = by_assignment if isinstance(by_assignment, dict) else {}
    for folder, meta in report.submissions.items():
        notes.setdefault(folder, {})[assignment] = meta["notes"]
        by_assignment.setdefault(folder, {})[assignment] = meta
    (out / REPORT_NAME).write_text(json.dumps(
        {"format": report.format, "students": report.students, "submissions": merged, "intake_notes": notes,
         "by_assignment": by_assignment,
         "collisions": report.collisions, "set_aside": report.set_aside, "renamed": report.renamed,
         "replaced": report.replaced, "unmatched": report.unmatched, "ignored": report.ignored}, indent=2))
