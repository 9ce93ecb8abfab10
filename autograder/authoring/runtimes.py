"""The times the notebooks state: measured ones from the course's calibration record, else the estimate.

A solution's Markdown puts each statement of how long a GPU run takes between ``<!-- runtime -->``
and ``<!-- /runtime -->``, worded as an estimate that says how it was made. When ``course.toml``
names a calibration record (``[release] calibration = "calibration/calibration.json"``, written by
``python -m autograder calibrate --profile full --out calibration``), each such span of an
assignment the record measured without an error becomes the measurement: the device, the date and
the minutes. ``stamping.stamp_course_sources`` applies it to the course sources, so the release,
``generate`` and grading carry the same text and locked cells keep their checksums.
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

SPAN = re.compile(r"<!-- runtime -->(.*?)<!-- /runtime -->", re.DOTALL)


class CalibrationError(ValueError):
    """course.toml names a record that cannot be used; the message says what to do."""


def calibration_record(settings_file: Path) -> dict | None:
    """The record ``[release] calibration`` names (relative to ``settings_file``'s folder), or None."""
    try:
        settings = tomllib.loads(Path(settings_file).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None  # install_url's reader says what is wrong with the file
    name = settings.get("release", {}).get("calibration")
    if not name:
        return None
    path = Path(settings_file).parent / name
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CalibrationError(f"{settings_file} [release] calibration names {path}, which cannot be read ({error}); "
                               "run `python -m autograder calibrate --profile full --out DIR` on the course's GPU "
                               "or remove the setting") from None
    if not isinstance(record, dict) or not isinstance(record.get("assignments"), dict):
        raise CalibrationError(f"{path} is not a calibration record (no 'assignments'); write it with "
                               "`python -m autograder calibrate`")
    return record


def measured_sentence(record: dict | None, assignment_id: str) -> str | None:
    """What replaces the assignment's estimates: a full-profile GPU run of it, or None (keep the estimate)."""
    run = (record or {}).get("assignments", {}).get(assignment_id)
    if record is None or record.get("profile") != "full" or not run or run.get("error"):
        return None
    device = (run.get("kernel") or {}).get("device")
    if not device or not run.get("wall_s"):
        return None
    date = str(record.get("created", ""))[:10]
    training = (f", {run['train_s'] / 60:.0f} of them training ({run['seconds_per_step']:.2f} s per step)"
                if run.get("train_s") and run.get("seconds_per_step") else "")
    return f"measured on a {device} on {date}: {run['wall_s'] / 60:.0f} minutes for the whole notebook{training}"


def stamp_runtimes(text: str, sentence: str | None) -> str:
    """``text`` with every runtime span holding ``sentence`` (unchanged when it is None)."""
    if sentence is None:
        return text
    return SPAN.sub(lambda _: f"<!-- runtime -->{sentence}<!-- /runtime -->", text)
