"""collect and intake on hostile LMS downloads and uploads: fast, no kernel runs.

Names that try to leave --out, names that sanitise alike, zip bombs (in the download and inside
a student's upload), FIFOs and links, a student's timestamp.txt, the helpers.submission.pack zip
uploaded wrapped in a folder or with its artifacts one level deeper.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "course"
RELEASE = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
SOLUTION = FIXTURE / "solutions" / "toy_add" / "toy_add.ipynb"


def _filled(path: Path) -> Path:
    from autograder.authoring.course import fill_release

    path.parent.mkdir(parents=True, exist_ok=True)
    fill_release(RELEASE, SOLUTION, path)
    return path


def _bomb_bytes(megabytes: int) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as handle:
        with handle.open("zeros.bin", "w") as member:
            for _ in range(megabytes):
                member.write(b"\0" * 2**20)
    return buffer.getvalue()


def test_names_never_leave_out_and_collisions_are_kept_apart(tmp_path):
    from autograder.intake.lms import collect

    download = tmp_path / "download"
    for name in ("Zoë Müller", "Zoé Müller", "Ann Lee", "Ann_Lee", "...", "..escape"):
        _filled(download / name / "homework.ipynb")
    _filled(download / "...ipynb")  # a student called ".." in a plain download
    _filled(download / "....ipynb")
    out = tmp_path / "area" / "subs"
    (tmp_path / "area" / "sibling").mkdir(parents=True)
    (tmp_path / "area" / "sibling" / "keep.txt").write_text("untouched")
    report = collect(download, "toy_add", out)
    folders = sorted(report.students)
    assert len(folders) == 8 and len(set(folders)) == 8, folders
    names = {meta["name"]: folder for folder, meta in report.submissions.items()}
    assert names["Zoë Müller"] != names["Zoé Müller"] and {names["Zoë Müller"], names["Zoé Müller"]} == {
        "zoe_muller", "zoe_muller-2"}
    assert {names["Ann Lee"], names["Ann_Lee"]} == {"ann_lee", "ann_lee-2"}
    assert sum("both sanitise to" in line for line in report.collisions) >= 3
    for folder in folders:
        assert (out / folder / "toy_add" / "toy_add.ipynb").exists()
        assert not folder.startswith(".") and "/" not in folder
    assert sorted(p.name for p in (tmp_path / "area").iterdir()) == ["sibling", "subs"]
    assert (tmp_path / "area" / "sibling" / "keep.txt").read_text() == "untouched"
    lines = "\n".join(report.lines())
    assert "'Zoë Müller'" in lines and "collision:" in lines
    saved = json.loads((out / "_collect_report.json").read_text())
    assert saved["submissions"][names["Zoë Müller"]]["name"] == "Zoë Müller"
    again = collect(download, "toy_add", out)  # the same download again: same folders, no -3
    assert sorted(again.students) == folders


def test_canvas_late_flag_decides_lateness_not_a_student_file(tmp_path):
    from autograder.intake.lms import collect

    raw = tmp_path / "raw"
    _filled(raw / ".._1_11_toy_add.ipynb")
    _filled(raw / "latey_late_2_21_toy_add.ipynb")
    (raw / "latey_late_2_22_timestamp.txt").write_text("2001-01-01 00:00:00.000000 UTC")
    _filled(raw / "early_3_31_toy_add.ipynb")
    (raw / "early_3_32_timestamp.txt").write_text("2099-01-01 00:00:00.000000 UTC")
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w") as handle:
        for path in raw.iterdir():
            handle.write(path, path.name)
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert report.submissions["latey"]["late"] is True
    assert report.submissions["latey"]["timestamp_source"] == "canvas _late flag"
    assert report.submissions["early"]["late"] is False
    assert report.submissions["unnamed"]["name"] == ".." and report.submissions["unnamed"]["user_id"] == "1"
    assert not list(out.rglob("timestamp.txt"))
    assert any("timestamp.txt" in note for note in report.submissions["latey"]["notes"])
    assert not (tmp_path / "toy_add").exists()


def test_zip_bombs_are_refused_with_a_line(tmp_path):
    from autograder.intake.lms import collect

    raw = tmp_path / "raw"
    _filled(raw / "bomber_5_51_toy_add.ipynb")
    (raw / "bomber_5_52_artifacts.zip").write_bytes(_bomb_bytes(300))  # 300 MiB of zeros in ~300 KB
    _filled(raw / "fine_6_61_toy_add.ipynb")
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        for path in raw.iterdir():
            handle.write(path, path.name)
        with handle.open("bigfile_7_71_data.bin", "w") as member:  # a bomb at the download's top level
            for _ in range(300):
                member.write(b"\0" * 2**20)
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out, max_mb=100)
    assert set(report.students) == {"bomber", "fine"}
    assert any(path.startswith("bigfile") and "not extracted" in why for path, why in report.unmatched)
    assert any("artifacts.zip" in note and "not extracted" in note for note in report.submissions["bomber"]["notes"])
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert total < 5 * 2**20, total
    with pytest.raises(ValueError, match="neither a folder nor a ZIP"):  # one clear line, nothing written
        collect(tmp_path / "raw" / "bomber_5_51_toy_add.ipynb", "toy_add", tmp_path / "other")


def test_fifo_and_links_in_a_download_are_skipped(tmp_path):
    from autograder.intake.lms import collect

    download = tmp_path / "download"
    _filled(download / "Pat" / "toy_add.ipynb")
    os.mkfifo(download / "Pat" / "pipe")
    os.symlink("/etc/passwd", download / "Pat" / "passwd")
    report = collect(download, "toy_add", tmp_path / "subs")
    notes = " ".join(report.submissions["pat"]["notes"])
    assert "a FIFO" in notes and "a symbolic link" in notes
    assert sorted(report.students["pat"]) == ["toy_add.ipynb"]


def _assignment(artifacts=("artifacts/adapter",)):
    import dataclasses

    from autograder.manifest import load_assignments

    assignment = load_assignments(SOLUTION.parents[2], ["toy_add"])[0]
    return dataclasses.replace(assignment, artifacts=tuple(artifacts))


def _pack(zip_path: Path, scratch: Path, prefix: str, adapter_at: str) -> None:
    with zipfile.ZipFile(zip_path, "w") as handle:
        handle.write(_filled(scratch / "toy_add.ipynb"), f"{prefix}toy_add.ipynb")
        handle.writestr(f"{adapter_at}/adapter_config.json", json.dumps({"base_model_name_or_path": "tiny"}))


@pytest.mark.parametrize("prefix, adapter_at, moved", [
    ("", "artifacts/adapter", False),                                   # as helpers.submission.pack makes it
    ("toy_add/", "toy_add/artifacts/adapter", False),                   # wrapped in one folder
    ("", "toy_add/artifacts/adapter", True),                            # artifacts one level deeper
    ("", "artifacts/artifacts/adapter", True),                          # artifacts/artifacts/...
    ("submission/", "submission/artifacts/artifacts/adapter", True),    # both
])
def test_uploaded_pack_zip_is_accepted_as_uploaded(tmp_path, prefix, adapter_at, moved):
    from autograder.intake.placement import place_submission

    folder = tmp_path / "subs" / "ann" / "toy_add"
    folder.mkdir(parents=True)
    _pack(folder / "toy_add_submission.zip", tmp_path / "scratch", prefix, adapter_at)
    destination = tmp_path / "course" / "submitted" / "ann" / "toy_add"
    destination.parent.mkdir(parents=True)
    notebook, problem, notes = place_submission(folder, _assignment(), destination)
    assert problem is None and notebook == destination / "toy_add.ipynb", notes
    assert (destination / "artifacts" / "adapter" / "adapter_config.json").exists(), notes
    assert any("extracted toy_add_submission.zip" in n for n in notes)
    assert any("found artifacts/adapter" in n for n in notes) == moved, notes


def test_special_files_and_uploaded_timestamp_in_a_submission(tmp_path):
    from autograder.intake.placement import place_submission

    folder = tmp_path / "subs" / "ann" / "toy_add"
    _filled(folder / "toy_add.ipynb")
    os.mkfifo(folder / "fifo")
    os.symlink("/etc/passwd", folder / "link")
    (folder / "timestamp.txt").write_text("2001-01-01 00:00:00 UTC")
    destination = tmp_path / "course" / "submitted" / "ann" / "toy_add"
    destination.parent.mkdir(parents=True)
    notebook, problem, notes = place_submission(folder, _assignment(()), destination)
    assert notebook is not None and problem is None
    assert sorted(p.name for p in destination.iterdir()) == ["toy_add.ipynb"]
    text = " ".join(notes)
    assert "fifo: it is a FIFO" in text and "link: it is a symbolic link" in text and "timestamp.txt" in text
    assert str(tmp_path) not in text  # no grader path reaches the student


def test_report_lines_print_control_characters_as_escapes(tmp_path):
    """A student's name or file name holding terminal escape sequences (retitle the window, erase
    the line above) or a bidi override reaches the report as visible escapes, never raw."""
    from autograder.intake.lms import collect

    evil = "Eve\x1b]0;grading done\x07\x1b[1A\x1b[2K\u202eNN"
    download = tmp_path / "download"
    _filled(download / evil / "homework.ipynb")
    (download / evil / f"notes{evil}.bin").write_bytes(b"\0" * 10)
    report = collect(download, "toy_add", tmp_path / "subs")
    lines = report.lines()
    assert not any(ch in line for line in lines for ch in ("\x1b", "\x07", "\u202e")), lines
    assert any("Eve\\x1b]0;grading done\\x07\\x1b[1A\\x1b[2K\\u202eNN" in line for line in lines), lines
    saved = json.loads((tmp_path / "subs" / "_collect_report.json").read_text())
    assert [meta["name"] for meta in saved["submissions"].values()] == [evil]  # the record keeps the name as given


def test_grade_files_never_hand_a_spreadsheet_a_formula(tmp_path):
    """A name as the LMS spells it (a Moodle folder named =HYPERLINK(...)) and a feedback line
    quoting a student's error reach the CSV files as text, never as a formula; numbers stay numbers."""
    import csv

    from autograder.outcome import Result
    from autograder.reports.feedback import write_grades, write_lms_grades

    formula = '=HYPERLINK(CONCAT("http:",CHAR(47),CHAR(47),"evil.example"),"Details")'
    result = Result(student="hyperlink_concat", assignment="toy_add", score=2, max_score=2, late_penalty=0,
                    feedback=["@SUM(1+1)*cmd|' /C calc'!A0"])
    write_lms_grades([result], {"hyperlink_concat": {"lms": "moodle", "user_id": "1001", "name": formula}},
                     tmp_path / "lms.csv")
    write_grades([result], tmp_path / "grades.csv")
    lms = next(csv.DictReader(open(tmp_path / "lms.csv")))
    grades = next(csv.DictReader(open(tmp_path / "grades.csv")))
    assert lms["name"] == "'" + formula and lms["points"] == "2" and lms["lms_user_id"] == "1001"
    assert grades["feedback"] == "'@SUM(1+1)*cmd|' /C calc'!A0" and grades["score"] == "2"
    for row in (lms, grades):
        assert not any(value.startswith(("=", "+", "@")) for value in row.values()), row


def test_a_collect_that_fails_half_way_leaves_out_as_it_was(tmp_path, monkeypatch):
    """Issue 41: a failure while placing the third student (a full disk, a bug) leaves last week's OUT and no
    half-written folder; a later collect that succeeds sees only what it placed."""
    from autograder.intake import lms
    from autograder.intake.collector import Collector

    week1, week2 = tmp_path / "week1", tmp_path / "week2"
    for name in ("Ann Lee", "Bo Chan"):
        _filled(week1 / name / "homework.ipynb")
    for name in ("Ann Lee", "Bo Chan", "Cy Diaz", "Di Eng"):
        _filled(week2 / name / "homework.ipynb")
    resubmitted = week2 / "Ann Lee" / "homework.ipynb"  # Ann's second upload differs from her first
    resubmitted.write_text(resubmitted.read_text().replace("return a + b", "return b + a"))
    out = tmp_path / "subs"
    lms.collect(week1, "toy_add", out)
    before = sorted((p.relative_to(out).as_posix(), p.read_bytes()) for p in out.rglob("*") if p.is_file())
    real, calls = Collector._finish_student, []

    def failing(collector, student, name):  # placing students one by one: the third one fails
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(collector, student, name)

    monkeypatch.setattr(Collector, "_finish_student", failing)
    with pytest.raises(OSError, match="No space left"):
        lms.collect(week2, "toy_add", out)
    after = sorted((p.relative_to(out).as_posix(), p.read_bytes()) for p in out.rglob("*") if p.is_file())
    assert after == before and sorted(p.name for p in tmp_path.iterdir()) == ["subs", "week1", "week2"]
    monkeypatch.setattr(Collector, "_finish_student", real)
    report = lms.collect(week2, "toy_add", out)
    assert len(report.students) == 4 and ".collecting" not in (out / "_collect_report.json").read_text()
