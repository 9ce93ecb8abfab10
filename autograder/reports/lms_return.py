"""Feedback back through the LMS: one ZIP per assignment and LMS that the LMS takes in one upload.

    python -m autograder return OUT

- **Canvas** (*Gradebook, the assignment's menu, Re-Upload Submissions*): a ZIP of files named exactly as the
  student's graded upload was named in the Canvas download (``collect`` recorded it), each holding that
  student's feedback page; Canvas matches the names and attaches each file as a comment to the right
  submission.
- **Moodle** (*Assignment, View all submissions, Upload multiple feedback files in a zip*): a ZIP with one
  folder per student, named as the student's folder in the Moodle download, holding the feedback page.
- **Gradescope** reads ``results.json`` (already beside each result): nothing to zip.

A student whose upload name is unknown (a plain folder, a collect that predates this record) gets a line and is
left out, never guessed. Only the student's own feedback page goes in: never the staff's pages (references,
similarity, statistics).
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.reports.feedback import load_results


@dataclass
class Returned:
    zips: list = field(default_factory=list)
    """The ZIPs written."""
    lines: list = field(default_factory=list)
    """One line per student left out, and what the Gradescope students need."""


def _upload_of(meta: dict, assignment: str) -> str:
    """The student's graded upload, as its path in the LMS download ("" when collect did not record it)."""
    found = (meta.get("by_assignment") or {}).get(assignment) or {}
    return str(found.get("graded_upload") or "")


def entry_name(lms: str, upload: str, assignment: str) -> str | None:
    """Where a student's feedback page goes in the LMS's ZIP; None for an LMS that takes no ZIP."""
    path = PurePosixPath(upload)
    if lms == "canvas":
        return path.name
    if lms == "moodle" and len(path.parts) > 1:
        return f"{path.parts[0]}/{assignment}_feedback.html"
    return None


def write_returns(out: Path) -> Returned:
    from autograder.reports.grades import load_lms

    out, lms, done = Path(out), load_lms(Path(out)), Returned()
    entries: dict[tuple[str, str], dict[str, Path]] = {}
    for result in load_results(out):
        meta = lms.get(result.student, {})
        kind, page = meta.get("lms", ""), out / "feedback" / result.student / result.assignment / \
            f"{result.assignment}.html"
        if kind == "gradescope":
            continue
        upload = _upload_of(meta, result.assignment)
        name = entry_name(kind, upload, result.assignment) if upload else None
        if name is None or not page.is_file():
            why = ("no feedback page" if not page.is_file() else "collect recorded no upload name for them"
                   if not upload else f"their LMS ({kind or 'a plain folder'}) takes no feedback ZIP")
            done.lines.append(f"{result.student}/{result.assignment}: not in a return ZIP ({why}): send "
                              f"{page.relative_to(out)} by hand")
            continue
        entries.setdefault((result.assignment, kind), {})[name] = page
    folder = out / "return"
    for (assignment, kind), files in sorted(entries.items()):
        folder.mkdir(exist_ok=True)
        path = folder / f"{assignment}-{kind}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, page in sorted(files.items()):
                archive.write(page, name)
        done.zips.append(path)
    if any(meta.get("lms") == "gradescope" for meta in lms.values()):
        done.lines.append("Gradescope students: upload nothing; Gradescope reads each result's results.json")
    return done
