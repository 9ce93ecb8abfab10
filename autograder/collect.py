"""``python -m autograder collect ZIP --assignment ID --out DIR``: sort an LMS download into
``DIR/<student>/<ID>/<ID>.ipynb`` (+ artifact folders beside it).

Understood layouts (a ZIP file or an already-extracted folder; one wrapping folder is skipped):

- Canvas "Download submissions": flat files ``<login>[_late]_<userid>_<submissionid>_<name>``
  (Canvas may append ``-1``, ``-2`` to repeated names); student = login.
- Moodle "Download all submissions": folders (or flat files)
  ``<Full Name>_<participant id>_assignsubmission_file_[<name>]``; student = ``full_name_<id>``.
- Gradescope "Export submissions": ``submission_<id>/`` folders and ``submission_metadata.yml``
  (student = the submitter's SID, else e-mail name, else name; ``:created_at`` becomes
  nbgrader's ``timestamp.txt``).
- A plain folder of ``<student>.ipynb`` files, or of ``<student>/`` folders.

ZIP files a student uploaded (an ``artifacts.zip`` beside the notebook) are extracted in place.
Whatever cannot be matched to a student is copied to ``DIR/_unmatched/`` and reported, never
dropped silently.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

CANVAS = re.compile(r"^(?P<login>[A-Za-z0-9.\-]+?)(?:_late|_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<name>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
GRADESCOPE = re.compile(r"^submission_\d+$")
JUNK = {"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"}
CANVAS_COPY = re.compile(r"-\d+(?=\.[^.]+$)")


@dataclass
class CollectReport:
    students: dict = field(default_factory=dict)
    """student -> list of files placed (relative to the student's assignment folder)."""
    unmatched: list = field(default_factory=list)
    """(path in the download, why) for everything that could not be attributed."""
    ignored: list = field(default_factory=list)
    format: str = ""

    def lines(self) -> list[str]:
        out = [f"format: {self.format}; {len(self.students)} student(s)"]
        for student, files in sorted(self.students.items()):
            notebooks = [f for f in files if f.endswith(".ipynb")]
            warn = "" if len(notebooks) == 1 else f"  <- {len(notebooks)} notebooks"
            out.append(f"  {student}: {len(files)} file(s){warn}")
        for path, why in self.unmatched:
            out.append(f"unmatched: {path} ({why})")
        return out


def _slug(text: str) -> str:
    text = re.sub(r"[^A-Za-z0-9]+", "_", text.strip()).strip("_").lower()
    return text or "unknown"


def _extract_nested(folder: Path) -> None:
    """Extract ZIPs a student uploaded (artifacts.zip) into the folder that holds them."""
    for archive in sorted(folder.rglob("*.zip")):
        try:
            with zipfile.ZipFile(archive) as handle:
                _safe_extract(handle, archive.parent)
            archive.unlink()
        except zipfile.BadZipFile:
            pass  # left as is: the grader will report the artifact as missing or corrupt


def _safe_extract(handle: zipfile.ZipFile, target: Path) -> None:
    root = target.resolve()
    for member in handle.infolist():
        destination = (target / member.filename).resolve()
        if root not in destination.parents and destination != root:
            continue  # "../" paths
        if member.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            with handle.open(member) as src, open(destination, "wb") as dst:
                shutil.copyfileobj(src, dst)
            try:  # keep the upload time: without timestamp.txt, lateness is judged by mtime
                stamp = time.mktime((*member.date_time, 0, 0, -1))
                os.utime(destination, (stamp, stamp))
            except (OverflowError, ValueError, OSError):
                pass


def _read_gradescope_metadata(path: Path) -> dict:
    """submission folder -> (student, created_at) from Gradescope's submission_metadata.yml."""
    try:
        import yaml

        data = yaml.safe_load(path.read_text()) or {}
    except Exception:
        return {}
    found = {}
    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        submitters = value.get(":submitters") or value.get("submitters") or []
        first = submitters[0] if submitters else {}
        student = (first.get(":sid") or (first.get(":email") or "").split("@")[0] or first.get(":name") or key)
        created = value.get(":created_at") or value.get("created_at")
        found[str(key)] = (_slug(str(student)), str(created) if created else None)
    return found


class _Collector:
    def __init__(self, assignment: str, out: Path):
        self.assignment, self.out = assignment, out
        self.report = CollectReport()
        self.staging: dict[str, Path] = {}
        self.scratch = Path(tempfile.mkdtemp(prefix="collect-"))

    def add(self, student: str, source: Path, relative: str | None = None) -> None:
        folder = self.staging.setdefault(student, self.scratch / "students" / student)
        target = folder / (relative or source.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)

    def unmatched(self, path: Path, root: Path, why: str) -> None:
        relative = path.relative_to(root)
        self.report.unmatched.append((str(relative), why))
        target = self.out / "_unmatched" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(path, target, dirs_exist_ok=True) if path.is_dir() else shutil.copy2(path, target)

    def finish(self, timestamps: dict) -> CollectReport:
        for student, folder in sorted(self.staging.items()):
            _extract_nested(folder)
            notebooks = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            base = folder
            if len(notebooks) == 1:
                base = notebooks[0].parent  # re-root at the notebook: artifacts stay beside it
            destination = self.out / student / self.assignment
            if destination.exists():
                shutil.rmtree(destination)
            shutil.copytree(base, destination, ignore=shutil.ignore_patterns(*JUNK))
            if len(notebooks) == 1 and notebooks[0].name != f"{self.assignment}.ipynb":
                (destination / notebooks[0].name).rename(destination / f"{self.assignment}.ipynb")
            if timestamps.get(student):
                (destination / "timestamp.txt").write_text(timestamps[student])
            self.report.students[student] = sorted(str(p.relative_to(destination)) for p in destination.rglob("*")
                                                   if p.is_file())
            if not notebooks:
                self.report.unmatched.append((f"{student}/", "no notebook among this student's files"))
        shutil.rmtree(self.scratch, ignore_errors=True)
        return self.report


def collect(download: Path, assignment: str, out: Path) -> CollectReport:
    download, out = Path(download), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lms-") as scratch:
        if download.is_file():
            try:
                with zipfile.ZipFile(download) as handle:
                    _safe_extract(handle, Path(scratch))
            except zipfile.BadZipFile as error:
                raise ValueError(f"{download} is neither a folder nor a ZIP file ({error})") from None
            root = Path(scratch)
        elif download.is_dir():
            root = download
        else:
            raise ValueError(f"{download} does not exist")
        entries = [p for p in root.iterdir() if p.name not in JUNK]
        while len(entries) == 1 and entries[0].is_dir() and not _one_submission(entries[0]):
            root = entries[0]  # a wrapping folder ("submissions/")
            entries = [p for p in root.iterdir() if p.name not in JUNK]
        return _collect_root(root, entries, assignment, out)


def _one_submission(folder: Path) -> bool:
    """True for a single student's folder (LMS-named, or exactly one notebook and no LMS names)."""
    if MOODLE.match(folder.name) or GRADESCOPE.match(folder.name):
        return True
    names = [p.name for p in folder.iterdir()]
    if "submission_metadata.yml" in names or any(CANVAS.match(n) or MOODLE.match(n) or GRADESCOPE.match(n)
                                                 for n in names):
        return False
    return len([n for n in names if n.endswith(".ipynb")]) == 1


def _collect_root(root: Path, entries: list[Path], assignment: str, out: Path) -> CollectReport:
    collector = _Collector(assignment, out)
    report = collector.report
    report.ignored = sorted(p.name for p in root.iterdir() if p.name in JUNK)
    timestamps: dict[str, str] = {}
    metadata_file = root / "submission_metadata.yml"
    gradescope = _read_gradescope_metadata(metadata_file) if metadata_file.exists() else {}
    formats = set()
    for entry in sorted(entries):
        name = entry.name
        if entry == metadata_file:
            continue
        if entry.is_dir():
            if GRADESCOPE.match(name):
                formats.add("gradescope")
                student, created = gradescope.get(name, (_slug(name), None))
                if created:
                    timestamps[student] = created
                collector.add(student, entry, ".")
            elif MOODLE.match(name):
                formats.add("moodle")
                m = MOODLE.match(name)
                collector.add(f"{_slug(m['name'])}_{m['id']}", entry, ".")
            elif any(entry.rglob("*.ipynb")):
                formats.add("folders")
                collector.add(_slug_keep(name), entry, ".")
            else:
                collector.unmatched(entry, root, "a folder with no notebook and no LMS naming")
            continue
        m = MOODLE.match(name)
        if m and m["rest"]:
            formats.add("moodle")
            collector.add(f"{_slug(m['name'])}_{m['id']}", entry, m["rest"])
            continue
        m = CANVAS.match(name)
        if m:
            formats.add("canvas")
            collector.add(m["login"].lower(), entry, CANVAS_COPY.sub("", m["name"]))
            continue
        if entry.suffix == ".ipynb":
            formats.add("plain")
            collector.add(_slug_keep(entry.stem), entry, f"{assignment}.ipynb")
            continue
        collector.unmatched(entry, root, "file name matches no LMS convention")
    report.format = "+".join(sorted(formats)) or "unknown"
    collector.finish(timestamps)
    (out / "_collect_report.json").write_text(json.dumps(
        {"format": report.format, "students": report.students, "unmatched": report.unmatched,
         "ignored": report.ignored}, indent=2))
    return report


def _slug_keep(text: str) -> str:
    """A student id from a file or folder name: keep it readable, drop unsafe characters."""
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", text.strip()).strip("_") or "unknown"
