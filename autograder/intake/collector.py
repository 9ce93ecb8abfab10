"""One collect's students and uploads: who is who, which upload is graded, where each file goes.

A layout (``autograder.intake.layouts``) attributes each upload of a download to a student
(:meth:`Collector.student`, :meth:`Collector.add`); :meth:`Collector.finish` then names the
students' folders (unique, portable, never merging two people), orders re-uploads, sets aside
what is not graded and places the rest under ``--out``. ``autograder.intake.lms`` drives it.
"""
from __future__ import annotations

import filecmp
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from autograder.intake.archives import JUNK, Budget, extract_archives
from autograder.intake.names import Namer, fold, is_reserved
from autograder.intake.placement import safe_copy

CANVAS_COPY = re.compile(r"^(?P<base>.+)-(?P<n>\d+)(?P<ext>\.[^.]+)$")
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


class Collector:
    """Gathers each student's uploads as a layout attributes them, then places them (:meth:`finish`)."""

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
