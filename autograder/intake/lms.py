"""``python -m autograder collect ZIP --assignment ID --out DIR``: sort an LMS download into
``DIR/<student>/<ID>/<ID>.ipynb`` (+ artifact folders beside it).

Understood layouts (a ZIP file or an already-extracted folder; wrapping folders are skipped), one
class each in :mod:`autograder.intake.layouts`; :mod:`autograder.intake.collector` places what they
attribute:

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
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.intake import layouts
from autograder.intake.archives import JUNK, MAX_BYTES, Budget, extract_zip
from autograder.intake.collector import Collector, CollectReport
from autograder.intake.placement import REPORT_NAME

DOWNLOAD_MAX_BYTES = 4096 * 2**20
DOWNLOAD_MAX_FILES = 10**6


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
    if layouts.MOODLE.match(folder.name) or layouts.GRADESCOPE.match(folder.name):
        return True
    names = [p.name for p in folder.iterdir()]
    if "submission_metadata.yml" in names or any(named.match(n) for n in names for named in layouts.NAMED_LIKE_AN_LMS):
        return False
    return len([n for n in names if n.endswith(".ipynb")]) == 1


def _collect_root(unpacked: _Unpacked, assignment: str, out: Path, max_bytes: int) -> CollectReport:
    root, entries = unpacked.root, unpacked.entries
    previous_report = _previous_report(out)
    previous = {k: v for k, v in previous_report.get("submissions", {}).items() if isinstance(v, dict)}
    collector = Collector(assignment, out, previous, max_bytes, unpacked.times, unpacked.base)
    report = collector.report
    report.unmatched.extend(unpacked.skipped)
    report.renamed.extend(unpacked.renamed)
    report.ignored = sorted(p.name for p in root.iterdir() if p.name in JUNK)
    metadata_file = root / "submission_metadata.yml"
    download = layouts.Download(assignment, layouts.read_gradescope_metadata(metadata_file)
                                if metadata_file.exists() else {})
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
            if not any(layout.folder(collector, entry, shown, download) for layout in layouts.FOLDER_LAYOUTS):
                collector.unmatched(entry, root, "a folder with no notebook and no LMS naming")
        elif not any(layout.file(collector, entry, shown, download) for layout in layouts.FILE_LAYOUTS):
            collector.unmatched(entry, root, "file name matches no LMS convention")
    report.format = "+".join(sorted(download.formats)) or "unknown"
    collector.finish()
    _write_report(out, assignment, report, previous, previous_report)
    return report


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
