"""The LMS layouts ``collect`` understands, one class each: how an entry of a download names its student.

- :class:`Gradescope`: ``submission_<id>/`` folders and ``submission_metadata.yml`` (the student is the
  submitter's SID, else e-mail name, else name; ``:created_at`` is the submission time);
- :class:`Moodle`: folders or flat files ``<Full Name>_<participant id>_assignsubmission_file_[<name>]``;
- :class:`Canvas`: flat files ``<login>[_late]_<userid>_<submissionid>_<name>`` (lateness: Canvas's own
  ``_late`` flag);
- :class:`Plain`: a folder of ``<student>.ipynb`` files, or of ``<student>/`` folders holding a notebook.

A layout's ``folder`` or ``file`` (it has those its LMS uses) takes one entry (``shown``: its name in the
download, before extraction made it portable) and says whether it attributed it; :data:`FOLDER_LAYOUTS` and
:data:`FILE_LAYOUTS` give the order ``autograder.intake.lms`` asks them in.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

CANVAS = re.compile(r"^(?P<login>[^_/\\]+?)(?P<late>_late|_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<name>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
GRADESCOPE = re.compile(r"^submission_\d+$")


@dataclass
class Download:
    """What every layout may need of the download being collected."""

    assignment: str
    gradescope: dict = field(default_factory=dict)
    """submission folder -> (SID, display name, created_at), from ``submission_metadata.yml``."""
    formats: set = field(default_factory=set)
    """The layouts found so far (the report's ``format``)."""


def read_gradescope_metadata(path: Path) -> dict:
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




class Gradescope:
    @staticmethod
    def folder(collector, entry: Path, shown: str, download: Download) -> bool:
        if not GRADESCOPE.match(shown):
            return False
        download.formats.add("gradescope")
        sid, display, created = download.gradescope.get(shown, (shown, shown, None))
        # a student who typed a classmate's SID is another person: never merged into the classmate
        student = collector.student(("gradescope", sid, display), display, "gradescope", sid, preferred=sid)
        if created:
            student.submitted_at = _iso(created)
            student.timestamp_source = "gradescope submission_metadata.yml"
        collector.add(student, entry, ".")
        return True


class Moodle:
    @staticmethod
    def folder(collector, entry: Path, shown: str, download: Download) -> bool:
        m = MOODLE.match(shown)
        if not m:
            return False
        download.formats.add("moodle")
        student = collector.student(("moodle", m["id"]), m["name"], "moodle", m["id"],
                                    preferred=f"{m['name']}_{m['id']}")
        collector.add(student, entry, ".")
        return True

    @staticmethod
    def file(collector, entry: Path, shown: str, download: Download) -> bool:
        m, who = MOODLE.match(entry.name), MOODLE.match(shown)
        if not (m and m["rest"] and who):
            return False
        download.formats.add("moodle")
        student = collector.student(("moodle", who["id"]), who["name"], "moodle", who["id"],
                                    preferred=f"{m['name']}_{m['id']}")
        collector.add(student, entry, m["rest"])
        return True


class Canvas:
    @staticmethod
    def file(collector, entry: Path, shown: str, download: Download) -> bool:
        m, who = CANVAS.match(entry.name), CANVAS.match(shown)
        if not (m and who):
            return False
        download.formats.add("canvas")
        student = collector.student(("canvas", who["uid"]), who["login"], "canvas", who["uid"], preferred=m["login"])
        if m["late"]:
            student.late = True
            student.timestamp_source = "canvas _late flag"
        elif student.late is None:
            student.late = False
            student.timestamp_source = "canvas (no _late flag)"
        collector.add(student, entry, m["name"], canvas=True, lms_id=int(m["sid"]))
        return True


class Plain:
    @staticmethod
    def folder(collector, entry: Path, shown: str, download: Download) -> bool:
        if not any(entry.rglob("*.ipynb")):
            return False
        download.formats.add("folders")
        collector.add(collector.student(("folders", shown), shown, "folders"), entry, ".")
        return True

    @staticmethod
    def file(collector, entry: Path, shown: str, download: Download) -> bool:
        if entry.suffix != ".ipynb":
            return False
        download.formats.add("plain")
        who = Path(shown).stem
        collector.add(collector.student(("plain", who), who, "plain", preferred=entry.stem), entry,
                      f"{download.assignment}.ipynb")
        return True


FOLDER_LAYOUTS = (Gradescope, Moodle, Plain)
FILE_LAYOUTS = (Moodle, Canvas, Plain)
NAMED_LIKE_AN_LMS = (CANVAS, MOODLE, GRADESCOPE)
"""A name any LMS would give (a folder holding such names is a download, not one student's)."""
