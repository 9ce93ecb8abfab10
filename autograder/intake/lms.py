"""``python -m autograder collect ZIP --assignment ID --out DIR``: sort an LMS download into
``DIR/<student>/<ID>/<ID>.ipynb`` (+ artifact folders beside it).

Understood layouts (a ZIP file or an already-extracted folder; wrapping folders are skipped):

- Canvas "Download submissions": flat files ``<login>[_late]_<userid>_<submissionid>_<name>``
  (Canvas may append ``-1``, ``-2`` to repeated names). Lateness: Canvas's own ``_late`` flag.
- Moodle "Download all submissions": folders (or flat files)
  ``<Full Name>_<participant id>_assignsubmission_file_[<name>]``.
- Gradescope "Export submissions": ``submission_<id>/`` folders and ``submission_metadata.yml``
  (student = the submitter's SID, else e-mail name, else name; ``:created_at`` is the time).
- A plain folder of ``<student>.ipynb`` files, or of ``<student>/`` folders.

Safety: nothing is written outside ``--out`` (names like ``..`` or ``a/b`` become plain folder
names); every student gets a unique sanitised folder name, and two people whose names sanitise
alike (``Zoë Müller``/``Zoé Müller``, ``Ann Lee``/``Ann_Lee``) get two folders and a line in the
report, never one merged folder; archives are extracted with limits on their uncompressed size
(``--max-mb``; a zip bomb is refused with a line, not expanded); links, FIFOs and device files are
skipped with a note; a ``timestamp.txt`` a student uploaded is dropped (it never decides
lateness). ZIPs a student uploaded (``artifacts.zip``, the ``helpers.submission.pack`` zip) are
extracted in place, and a notebook wrapped in a folder is lifted to the top with its siblings.

``DIR/_collect_report.json`` keeps, per folder, the name as the LMS spells it, the LMS user id,
the lateness and where it came from; ``autograde`` reads it (lateness) and writes the LMS grade
file from it. Collecting several downloads into one DIR merges their reports.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from autograder.intake.placement import JUNK, MAX_BYTES, REPORT_NAME, Budget, extract_archives, safe_copy

CANVAS = re.compile(r"^(?P<login>[^_/\\]+?)(?P<late>_late|_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<name>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
GRADESCOPE = re.compile(r"^submission_\d+$")
CANVAS_COPY = re.compile(r"-\d+(?=\.[^.]+$)")
DOWNLOAD_MAX_BYTES = 4096 * 2**20


@dataclass
class CollectReport:
    students: dict = field(default_factory=dict)
    """folder -> list of files placed (relative to the student's assignment folder)."""
    unmatched: list = field(default_factory=list)
    """(path in the download, why) for everything that could not be attributed."""
    ignored: list = field(default_factory=list)
    format: str = ""
    submissions: dict = field(default_factory=dict)
    """folder -> {name, lms, user_id, late, submitted_at, timestamp_source, notes}."""
    collisions: list = field(default_factory=list)
    """One sentence per pair of people whose names sanitise alike (kept apart)."""

    def lines(self) -> list[str]:
        out = [f"format: {self.format}; {len(self.students)} student(s)"]
        for student, files in sorted(self.students.items()):
            meta = self.submissions.get(student, {})
            notebooks = [f for f in files if f.endswith(".ipynb")]
            warn = "" if len(notebooks) == 1 else f"  <- {len(notebooks)} notebooks"
            origin = f" <- {meta.get('name')!r}" if meta.get("name") and meta.get("name") != student else ""
            ident = f" (id {meta['user_id']})" if meta.get("user_id") else ""
            late = f"; late per {meta.get('timestamp_source')}" if meta.get("late") else ""
            out.append(f"  {student}{origin}{ident}: {len(files)} file(s){late}{warn}")
            for note in meta.get("notes", []):
                out.append(f"      {note}")
        for line in self.collisions:
            out.append(f"collision: {line}")
        for path, why in self.unmatched:
            out.append(f"unmatched: {path} ({why})")
        return out


def sanitize(text: str) -> str:
    """A readable folder name: ASCII letters/digits, ``_ . -``; never empty, never ``.``/``..``."""
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^A-Za-z0-9_.@-]+", "_", text.strip()).strip("._-")
    text = re.sub(r"\.{2,}", ".", text)
    return text[:80] or "unnamed"


def _slug(text: str) -> str:
    return sanitize(text).replace(".", "_").replace("@", "_").lower().strip("_") or "unnamed"


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


class _Collector:
    def __init__(self, assignment: str, out: Path, previous: dict, max_bytes: int):
        self.assignment, self.out = assignment, out
        self.report = CollectReport()
        self.scratch = Path(tempfile.mkdtemp(prefix="collect-"))
        self.students: dict[tuple, _Student] = {}
        self.previous = previous
        self.max_bytes = max_bytes

    def student(self, identity: tuple, name: str, lms: str, user_id: str = "", preferred: str = "") -> _Student:
        if identity not in self.students:
            found = _Student(identity, name, lms, user_id, preferred or name)
            found.folder = self.scratch / "students" / str(len(self.students))
            found.folder.mkdir(parents=True)
            self.students[identity] = found
        return self.students[identity]

    def add(self, student: _Student, source: Path, relative: str | None = None) -> None:
        target = student.folder / (relative or source.name) if relative != "." else student.folder
        budget = Budget(self.max_bytes)
        if source.is_dir():
            safe_copy(source, target, student.notes, budget)
        elif source.is_file() and not source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        else:
            student.notes.append(f"skipped {source.name}: not a regular file")

    def unmatched(self, path: Path, root: Path, why: str) -> None:
        relative = path.relative_to(root)
        self.report.unmatched.append((str(relative), why))
        target = self.out / "_unmatched" / sanitize(str(relative).replace("/", "__"))
        if path.is_dir():
            safe_copy(path, target, [], Budget(self.max_bytes))
        elif path.is_file() and not path.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)

    def _name_for(self, student: _Student, taken: set) -> str:
        base = _slug(student.preferred)
        for key, meta in self.previous.items():  # the same person collected before keeps the folder
            if (meta.get("lms"), meta.get("user_id") or None, meta.get("name")) == (
                    student.lms, student.user_id or None, student.name) and key not in taken:
                return key
        name = base
        if name in taken or (self.out / name).exists() or name in self.previous:
            suffix = sanitize(student.user_id).lower() if student.user_id else ""
            candidates = ([f"{base}-{suffix}"] if suffix else []) + [f"{base}-{i}" for i in range(2, 10_000)]
            name = next(c for c in candidates if c not in taken and not (self.out / c).exists())
            other = next((s for s in self.students.values() if getattr(s, "assigned", None) == base), None)
            other_name = repr(other.name) if other else "an existing folder"
            self.report.collisions.append(f"{student.name!r} and {other_name} both sanitise to {base!r}: "
                                          f"{student.name!r} is in {name!r}")
        return name

    def finish(self) -> CollectReport:
        taken: set = set()
        for student in sorted(self.students.values(), key=lambda s: (s.preferred, s.name, s.user_id)):
            name = self._name_for(student, taken)
            taken.add(name)
            student.assigned = name  # type: ignore[attr-defined]
            folder = student.folder
            extract_archives(folder, student.notes, Budget(self.max_bytes))
            for stamp in folder.rglob("timestamp.txt"):
                stamp.unlink()
                student.notes.append("dropped the uploaded timestamp.txt: lateness comes from the LMS")
            notebooks = sorted((p for p in folder.rglob("*.ipynb") if not set(p.parts) & JUNK),
                               key=lambda p: (len(p.parts), str(p)))
            if len(notebooks) == 1 and notebooks[0].parent != folder:
                _hoist(notebooks[0].parent, folder)
                notebooks = [folder / notebooks[0].name]
            destination = self.out / name / self.assignment
            if self.out.resolve() not in destination.resolve().parents:  # never outside --out
                raise ValueError(f"refusing to write {destination} outside {self.out}")
            if destination.exists():
                shutil.rmtree(destination)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(folder, destination, ignore=shutil.ignore_patterns(*JUNK), symlinks=True)
            if len(notebooks) == 1 and notebooks[0].name != f"{self.assignment}.ipynb":
                (destination / notebooks[0].name).rename(destination / f"{self.assignment}.ipynb")
            self.report.students[name] = sorted(str(p.relative_to(destination)) for p in destination.rglob("*")
                                                if p.is_file())
            self.report.submissions[name] = {
                "name": student.name, "lms": student.lms, "user_id": student.user_id, "late": student.late,
                "submitted_at": student.submitted_at, "timestamp_source": student.timestamp_source,
                "assignment": self.assignment, "notes": student.notes}
            if not notebooks:
                self.report.unmatched.append((f"{name}/", "no notebook among this student's files"))
        shutil.rmtree(self.scratch, ignore_errors=True)
        return self.report


def _hoist(inner: Path, root: Path) -> None:
    """Move everything in ``inner`` (the notebook's folder) up into ``root``, keeping what is there."""
    for entry in list(inner.iterdir()):
        target = root / entry.name
        if target.exists():
            target = root / f"{inner.name}-{entry.name}"
        entry.rename(target)
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

        return parse_utc(text).replace(tzinfo=timezone.utc).isoformat(timespec="seconds")
    except Exception:
        return None


def _previous_report(out: Path) -> dict:
    try:
        data = json.loads((out / REPORT_NAME).read_text())
        return {k: v for k, v in data.get("submissions", {}).items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        return {}


def collect(download: Path, assignment: str, out: Path, max_mb: int | None = None) -> CollectReport:
    download, out = Path(download), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    student_bytes = (max_mb * 2**20) if max_mb else MAX_BYTES
    download_bytes = (max_mb * 2**20) if max_mb else DOWNLOAD_MAX_BYTES
    with tempfile.TemporaryDirectory(prefix="lms-") as scratch:
        zip_times: dict[str, datetime] = {}
        skipped: list[tuple[str, str]] = []
        if download.is_file():
            if not zipfile.is_zipfile(download):
                raise ValueError(f"{download} is neither a folder nor a ZIP file")
            zip_times = _extract_download(download, Path(scratch), download_bytes, skipped)
            root = Path(scratch)
        elif download.is_dir():
            root = download
        else:
            raise ValueError(f"{download} does not exist")
        entries = [p for p in root.iterdir() if p.name not in JUNK]
        while len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and not _one_submission(entries[0]):
            root = entries[0]  # a wrapping folder ("submissions/")
            entries = [p for p in root.iterdir() if p.name not in JUNK]
        report = _collect_root(root, entries, assignment, out, student_bytes, zip_times, skipped)
    return report


def _extract_download(download: Path, target: Path, max_bytes: int, skipped: list) -> dict:
    """Extract the LMS's ZIP member by member: a member over the limits (a zip bomb a student
    uploaded, a huge file) is skipped and reported; the rest is collected. Returns name -> time."""
    times = {}
    budget = Budget(max_bytes, 10**6)
    with zipfile.ZipFile(download) as handle:
        members = handle.infolist()
        if sum(m.file_size for m in members) > 50 * max_bytes:
            raise ValueError(f"{download} declares {sum(m.file_size for m in members) / 2**30:.0f} GiB uncompressed: "
                             "refused (not an LMS download?)")
        for member in members:
            if member.is_dir():
                continue
            if member.file_size > budget.bytes or (member.file_size > 2**20 and
                                                    member.file_size > 200 * max(member.compress_size, 1)):
                skipped.append((member.filename, f"expands to {member.file_size / 2**20:.0f} MiB "
                                                 f"({member.file_size // max(member.compress_size, 1)}:1): not extracted"))
                continue
            parts = Path(member.filename.replace("\\", "/")).parts
            if member.filename.startswith("/") or ".." in parts:
                skipped.append((member.filename, "a path outside the download: not extracted"))
                continue
            destination = (target / member.filename).resolve()
            if target.resolve() not in destination.parents:
                skipped.append((member.filename, "a path outside the download: not extracted"))
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            with handle.open(member) as src, open(destination, "wb") as dst:
                while chunk := src.read(1 << 20):
                    written += len(chunk)
                    if written > member.file_size or written > budget.bytes:
                        break
                    dst.write(chunk)
            if written > member.file_size or not budget.take(written):
                destination.unlink(missing_ok=True)
                skipped.append((member.filename, "holds more than it declares, or the download is over the size "
                                                 "limit: not extracted"))
                continue
            try:
                times[Path(member.filename).name] = datetime(*member.date_time, tzinfo=timezone.utc)
            except ValueError:
                pass
    return times


def _one_submission(folder: Path) -> bool:
    """True for a single student's folder (LMS-named, or exactly one notebook and no LMS names)."""
    if MOODLE.match(folder.name) or GRADESCOPE.match(folder.name):
        return True
    names = [p.name for p in folder.iterdir()]
    if "submission_metadata.yml" in names or any(CANVAS.match(n) or MOODLE.match(n) or GRADESCOPE.match(n)
                                                 for n in names):
        return False
    return len([n for n in names if n.endswith(".ipynb")]) == 1


def _collect_root(root: Path, entries: list[Path], assignment: str, out: Path, max_bytes: int,
                  zip_times: dict, skipped: list) -> CollectReport:
    previous = _previous_report(out)
    collector = _Collector(assignment, out, previous, max_bytes)
    report = collector.report
    report.unmatched.extend(skipped)
    report.ignored = sorted(p.name for p in root.iterdir() if p.name in JUNK)
    metadata_file = root / "submission_metadata.yml"
    gradescope = _read_gradescope_metadata(metadata_file) if metadata_file.exists() else {}
    formats = set()
    for entry in sorted(entries):
        name = entry.name
        if entry == metadata_file:
            continue
        if entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
            report.unmatched.append((name, "not a regular file or folder: skipped"))
            continue
        if entry.is_dir():
            if GRADESCOPE.match(name):
                formats.add("gradescope")
                sid, display, created = gradescope.get(name, (name, name, None))
                student = collector.student(("gradescope", sid), display, "gradescope", sid, preferred=sid)
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
                student = collector.student(("folders", name), name, "folders")
                collector.add(student, entry, ".")
            else:
                collector.unmatched(entry, root, "a folder with no notebook and no LMS naming")
            continue
        m = MOODLE.match(name)
        if m and m["rest"]:
            formats.add("moodle")
            student = collector.student(("moodle", m["id"]), m["name"], "moodle", m["id"],
                                        preferred=f"{m['name']}_{m['id']}")
            collector.add(student, entry, m["rest"])
            continue
        m = CANVAS.match(name)
        if m:
            formats.add("canvas")
            student = collector.student(("canvas", m["uid"]), m["login"], "canvas", m["uid"], preferred=m["login"])
            if m["late"]:
                student.late = True
                student.timestamp_source = "canvas _late flag"
            elif student.late is None:
                student.late = False
                student.timestamp_source = "canvas (no _late flag)"
            when = zip_times.get(name)
            if when is not None and not student.submitted_at:
                student.submitted_at = when.isoformat(timespec="seconds")
            collector.add(student, entry, CANVAS_COPY.sub("", m["name"]))
            continue
        if entry.suffix == ".ipynb":
            formats.add("plain")
            student = collector.student(("plain", entry.stem), entry.stem, "plain")
            collector.add(student, entry, f"{assignment}.ipynb")
            continue
        collector.unmatched(entry, root, "file name matches no LMS convention")
    report.format = "+".join(sorted(formats)) or "unknown"
    collector.finish()
    merged = {**previous, **report.submissions}
    (out / REPORT_NAME).write_text(json.dumps(
        {"format": report.format, "students": report.students, "submissions": merged,
         "collisions": report.collisions, "unmatched": report.unmatched, "ignored": report.ignored}, indent=2))
    return report
