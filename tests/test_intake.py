"""collect and placement on real uploads (issues 18.6, 19.3, 19.10): re-uploads, nested zip bombs,
names Windows cannot hold, ZIP names without the UTF-8 flag, ZIP entry times, .py uploads, an
LMS download given to autograde. Fast: no kernel runs; every download is built here."""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.intake import archives, names
from autograder.intake.lms import collect
from autograder.intake.placement import Budget, collect_notes, discover, place_submission

FIXTURE = Path(__file__).parent / "fixtures" / "course"
RELEASE = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
SOLUTION = FIXTURE / "solutions" / "toy_add" / "toy_add.ipynb"
WINDOWS_INVALID = set('<>:"|?*\\')


FILLED: bytes | None = None
BLANK = RELEASE.read_bytes()


def filled() -> bytes:
    """The release with every answer filled in from the solution (full marks)."""
    global FILLED
    if FILLED is None:
        import tempfile

        from autograder.authoring.course import fill_release

        with tempfile.TemporaryDirectory() as scratch:
            fill_release(RELEASE, SOLUTION, Path(scratch) / "nb.ipynb")
            FILLED = (Path(scratch) / "nb.ipynb").read_bytes()
    return FILLED


def _canvas_zip(path: Path, files: dict[str, bytes], times: dict[str, tuple] | None = None) -> Path:
    """A Canvas "Download submissions" ZIP: flat members, with the given ZIP entry times."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(times or {}).get(name, (2026, 5, 1, 12, 0, 0)))
            info.compress_type = zipfile.ZIP_DEFLATED
            handle.writestr(info, data)
    return path


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as handle:
        for name, data in files.items():
            handle.writestr(name, data)
    return buffer.getvalue()


def _assignment(artifacts=()):
    import dataclasses

    from autograder.manifest import load_assignments

    assignment = load_assignments(FIXTURE, ["toy_add"])[0]
    return dataclasses.replace(assignment, artifacts=tuple(artifacts))


def _place(folder: Path, tmp_path: Path, budget: Budget | None = None, artifacts=()):
    destination = tmp_path / "course" / "submitted" / folder.parent.name / folder.name
    destination.parent.mkdir(parents=True, exist_ok=True)
    return place_submission(folder, _assignment(artifacts), destination, budget)


def _all_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


# --------------------------------------------------------------------------------------
# 19.3: re-uploads
# --------------------------------------------------------------------------------------


def test_canvas_reupload_grades_the_newest_and_sets_the_older_aside(tmp_path):
    download = _canvas_zip(tmp_path / "canvas.zip", {
        "ann_11_101_toy_add.ipynb": BLANK,              # the first upload: 0 points
        "ann_11_102_toy_add-1.ipynb": BLANK + b" ",     # Canvas's -1: newer
        "ann_11_103_toy_add-2.ipynb": filled(),         # -2: the newest, full marks
        "bob_12_201_toy_add.ipynb": filled(),
    })
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    graded = out / "ann" / "toy_add" / "toy_add.ipynb"
    assert graded.read_bytes() == filled()
    assert sorted(p.name for p in (out / "ann" / "toy_add").iterdir()) == ["toy_add.ipynb"]
    aside = out / "_set_aside" / "ann" / "toy_add"
    assert sorted(p.read_bytes() for p in aside.iterdir()) == sorted([BLANK, BLANK + b" "])  # nothing lost
    notes = report.submissions["ann"]["notes"]
    line = next(n for n in notes if "3 times" in n)
    assert "graded toy_add-2.ipynb" in line and "Canvas's numbering" in line and "toy_add-1.ipynb" in line
    assert len(report.set_aside) == 2 and all(p.startswith("_set_aside/ann/toy_add/") for p, _ in report.set_aside)
    text = "\n".join(report.lines())
    assert "set aside: _set_aside/ann/toy_add/" in text and "graded toy_add-2.ipynb" in text
    assert report.submissions["bob"]["notes"] == [] and not (out / "_set_aside" / "bob").exists()
    # the note reaches the student's feedback through placement
    assert any("graded toy_add-2.ipynb" in n for n in collect_notes(out / "ann" / "toy_add"))
    notebook, problem, placed_notes = _place(out / "ann" / "toy_add", tmp_path)
    assert problem is None and notebook.read_bytes() == filled()
    assert any("graded toy_add-2.ipynb" in n and "set aside" in n for n in placed_notes)
    assert not any("_set_aside" in str(p) for p in discover(out, ["toy_add"]))


def test_a_suffix_in_the_students_file_name_never_beats_the_upload_time(tmp_path):
    """Issue 31: a draft the student named toy_add-9.ipynb, uploaded at 09:00, was graded over the
    finished toy_add.ipynb uploaded at 12:00 (Canvas's -N numbering decided). The LMS's time decides;
    without times, Canvas's own upload ids do; the suffix only breaks ties."""
    download = _canvas_zip(tmp_path / "canvas.zip", {
        "ann_11_900_toy_add-9.ipynb": BLANK, "ann_11_950_toy_add.ipynb": filled()},
        times={"ann_11_900_toy_add-9.ipynb": (2026, 5, 1, 9, 0, 0), "ann_11_950_toy_add.ipynb": (2026, 5, 1, 12, 0, 0)})
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert (out / "ann" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()
    assert (out / "_set_aside" / "ann" / "toy_add" / "toy_add-9.ipynb").read_bytes() == BLANK
    assert any("graded toy_add.ipynb, the newest by upload time" in n for n in report.submissions["ann"]["notes"])
    raw = tmp_path / "raw"  # an extracted download: no times, Canvas's upload ids order them
    raw.mkdir()
    (raw / "bo_12_900_toy_add-9.ipynb").write_bytes(BLANK)
    (raw / "bo_12_950_toy_add.ipynb").write_bytes(filled())
    collect(raw, "toy_add", tmp_path / "subs2")
    assert (tmp_path / "subs2" / "bo" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()


def test_notebooks_under_different_names_newest_by_upload_time(tmp_path):
    download = _canvas_zip(tmp_path / "canvas.zip", {
        "ann_11_101_toy_add.ipynb": BLANK,
        "ann_11_102_final_version.ipynb": filled(),
        "cy_13_301_toy_add.ipynb": filled(),
        "cy_13_302_scratch.ipynb": BLANK,
    }, times={"ann_11_101_toy_add.ipynb": (2026, 5, 1, 9, 0, 0),
              "ann_11_102_final_version.ipynb": (2026, 5, 1, 23, 0, 0),
              "cy_13_301_toy_add.ipynb": (2026, 5, 1, 22, 0, 0), "cy_13_302_scratch.ipynb": (2026, 5, 1, 22, 0, 10)})
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert (out / "ann" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()
    assert (out / "_set_aside" / "ann" / "toy_add" / "toy_add.ipynb").read_bytes() == BLANK
    ann = " ".join(report.submissions["ann"]["notes"])
    assert "graded final_version.ipynb, the newest by upload time" in ann and "set aside toy_add.ipynb" in ann
    assert "no time zone" in ann
    # ten seconds apart: one submission's files, no order between them; both kept, the name decides
    assert sorted(p.name for p in (out / "cy" / "toy_add").iterdir()) == ["scratch.ipynb", "toy_add.ipynb"]
    cy = " ".join(report.submissions["cy"]["notes"])
    assert "no order between them" in cy and "toy_add.ipynb is graded (its name)" in cy
    notebook, problem, _ = _place(out / "cy" / "toy_add", tmp_path)
    assert problem is None and notebook.read_bytes() == filled()


def test_uploads_that_cannot_be_ordered_are_all_kept(tmp_path):
    raw = tmp_path / "raw"  # an extracted folder download: no ZIP times
    raw.mkdir()
    (raw / "ann_11_101_toy_add.ipynb").write_bytes(BLANK)  # one file uploaded twice: Canvas's ids order them
    (raw / "ann_11_102_toy_add.ipynb").write_bytes(filled())
    (raw / "dee_14_401_a.ipynb").write_bytes(BLANK)  # two names, no times: nothing orders them
    (raw / "dee_14_402_b.ipynb").write_bytes(filled())
    out = tmp_path / "subs"
    report = collect(raw, "toy_add", out)
    assert (out / "ann" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()
    assert [p.read_bytes() for p in (out / "_set_aside" / "ann" / "toy_add").iterdir()] == [BLANK]
    assert any("the newest by Canvas's numbering" in n for n in report.submissions["ann"]["notes"])
    kept = sorted(p.read_bytes() for p in (out / "dee" / "toy_add").glob("*.ipynb"))
    assert kept == sorted([BLANK, filled()])  # neither overwritten
    assert any("none named toy_add.ipynb" in n for n in report.submissions["dee"]["notes"])
    assert not (out / "_set_aside" / "dee").exists()


# --------------------------------------------------------------------------------------
# 18.6: one extractor, limits across nesting, portable names
# --------------------------------------------------------------------------------------


def _nested_bomb() -> bytes:
    """600 MiB of zeros in 1 MiB members (each under the per-member ratio rule's 1 MiB floor), in
    30 zips inside the upload: a few KiB on disk, two levels deep (within the depth limit)."""
    inner = _zip_bytes({f"part{i:02}.bin": b"\0" * 2**20 for i in range(20)})
    return _zip_bytes({f"inner{i:02}.zip": inner for i in range(30)})


def test_nested_zip_bomb_is_stopped_across_nesting_with_a_line(tmp_path):
    bomb = _nested_bomb()
    assert len(bomb) < 0.05 * 2**20, len(bomb)
    download = _canvas_zip(tmp_path / "canvas.zip", {
        "bomber_5_51_toy_add.ipynb": filled(),
        "bomber_5_52_artifacts.zip": bomb,
    })
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)  # default limits: 1 GiB a submission
    written = sum(p.stat().st_size for p in _all_files(out))
    assert written < archives.RATIO_FLOOR + 2 * 2**20, written
    notes = report.submissions["bomber"]["notes"]
    assert any("artifacts.zip!inner" in n and "zip bomb" in n and "expands past 16 MiB" in n for n in notes), notes
    assert any("more member(s) not extracted" in n for n in notes)
    assert (out / "bomber" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()


def test_nesting_depth_and_file_count_hold_across_archives(tmp_path):
    deep = _zip_bytes({"toy_add.ipynb": filled()})
    for level in range(3):
        deep = _zip_bytes({f"level{level}.zip": deep})
    folder = tmp_path / "subs" / "ann" / "toy_add"
    folder.mkdir(parents=True)
    (folder / "upload.zip").write_bytes(deep)
    notes: list[str] = []
    archives.extract_archives(folder, notes, Budget())
    assert any("nested 3 deep (the limit is 2)" in n and "upload.zip!level2.zip!level1.zip" in n for n in notes), notes

    many = tmp_path / "many"
    many.mkdir()
    (many / "a.zip").write_bytes(_zip_bytes({f"f{i}.txt": b"x" for i in range(30)}))
    (many / "b.zip").write_bytes(_zip_bytes({"inner.zip": _zip_bytes({f"g{i}.txt": b"y" for i in range(30)})}))
    notes = []
    budget = Budget(max_files=40)
    for archive in many.iterdir():  # as placement's copy took them
        budget.take(archive.stat().st_size)
    archives.extract_archives(many, notes, budget)
    files = _all_files(many)
    assert len(files) <= 40, len(files)
    assert any("over the 40-file limit" in n for n in notes), notes


def test_notebook_is_graded_when_its_artifacts_are_over_the_limit(tmp_path):
    big = os.urandom(3 * 2**20)  # incompressible: a real adapter's weights
    pack = _zip_bytes({"artifacts/adapter/adapter_model.safetensors": big,
                       "artifacts/adapter/adapter_config.json": b"{}", "toy_add.ipynb": filled()})
    download = _canvas_zip(tmp_path / "canvas.zip", {"ann_11_101_toy_add_submission.zip": pack})
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out, max_mb=2)
    assert (out / "ann" / "toy_add" / "toy_add.ipynb").read_bytes() == filled()
    assert (out / "ann" / "toy_add" / "artifacts" / "adapter" / "adapter_config.json").exists()
    line = next(n for n in report.submissions["ann"]["notes"] if "adapter_model.safetensors" in n)
    assert "3.0 MiB" in line and "over the 2 MiB" in line and "not extracted" in line

    # the same pack zip straight into placement (a folder not made by collect)
    folder = tmp_path / "direct" / "bob" / "toy_add"
    folder.mkdir(parents=True)
    (folder / "toy_add_submission.zip").write_bytes(pack)
    notebook, problem, notes = _place(folder, tmp_path, Budget(2 * 2**20), artifacts=("artifacts/adapter",))
    assert problem is None and notebook.read_bytes() == filled()
    assert any("adapter_model.safetensors" in n and "not extracted" in n for n in notes), notes


def test_a_big_file_beside_the_notebook_does_not_crowd_it_out(tmp_path):
    folder = tmp_path / "subs" / "ann" / "toy_add"
    folder.mkdir(parents=True)
    (folder / "a_big_log.bin").write_bytes(b"z" * (3 * 2**20))  # sorts before the notebook
    (folder / "toy_add.ipynb").write_bytes(filled())
    notebook, problem, notes = _place(folder, tmp_path, Budget(2 * 2**20))
    assert problem is None and notebook.read_bytes() == filled()
    assert any("a_big_log.bin" in n and "over 2 MiB" in n for n in notes), notes


def test_names_are_portable():
    assert names.portable("con") == "con_" and names.portable("CON.txt") == "CON_.txt"
    assert names.portable("Lpt1 .ipynb") == "Lpt1_.ipynb" and names.portable("aux") == "aux_"
    assert names.portable("notes. . ") == "notes" and names.portable("a:b|c?.ipynb") == "a_b_c_.ipynb"
    assert names.portable("..") == "unnamed" and names.portable("conference.ipynb") == "conference.ipynb"
    assert len(names.portable("x" * 300 + ".ipynb").encode()) <= names.MAX_NAME_BYTES
    assert names.portable("x" * 300 + ".ipynb").endswith(".ipynb")
    namer = names.Namer()
    assert [namer.claim(n) for n in ("Data", "data", "DATA.", "Zoë", "Zoë")] == [
        "Data", "data-2", "DATA-3", "Zoë", "Zoë-2"]  # NFC and NFD are one name on macOS


def test_folder_and_file_names_are_safe_on_every_system(tmp_path):
    download = tmp_path / "download"
    for student in ("con", "AUX", "nul.", "Lpt1 ", "Ann", "ann"):
        (download / student).mkdir(parents=True)
        (download / student / "toy_add.ipynb").write_bytes(filled())
    (download / "Ann" / "Results").mkdir()
    (download / "Ann" / "Results" / "a.txt").write_text("1")
    (download / "Ann" / "results").mkdir()
    (download / "Ann" / "results" / "b.txt").write_text("2")
    (download / "Ann" / "prn.txt").write_text("3")
    (download / "Ann" / "upload.zip").write_bytes(_zip_bytes({"com1.log": b"4", "Data/x.txt": b"5", "data/y.txt": b"6",
                                                              "trailing./z.txt": b"7"}))
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert len(report.students) == 6
    for path in out.rglob("*"):
        part = path.name
        assert not names.is_reserved(part), path
        assert part == part.rstrip(". ") and not set(part) & WINDOWS_INVALID, path
    for folder in [out, *(p for p in out.rglob("*") if p.is_dir())]:
        entries = [p.name.casefold() for p in folder.iterdir()]
        assert len(entries) == len(set(entries)), folder  # no two names differ by case alone
    ann = out / next(k for k, v in report.submissions.items() if v["name"] == "Ann") / "toy_add"
    texts = sorted(p.read_text() for p in ann.rglob("*.txt")) + sorted(p.read_text() for p in ann.rglob("*.log"))
    assert texts == ["1", "2", "3", "5", "6", "7", "4"]  # all kept, none overwritten
    notes = " ".join(v for k, meta in report.submissions.items() for v in meta["notes"])
    assert "prn.txt as prn_.txt" in notes and "not every system can hold" in notes


# --------------------------------------------------------------------------------------
# 19.10: names without the UTF-8 flag, ZIP times, .py uploads, autograde on a ZIP
# --------------------------------------------------------------------------------------


def _without_utf8_flag(data: bytes, placeholder: bytes, raw_name: bytes) -> bytes:
    """A ZIP whose member name is ``raw_name`` with the UTF-8 flag off (as Windows' and old
    tools' zips are): written under an ASCII placeholder of the same length, then patched."""
    assert len(placeholder) == len(raw_name) and data.count(placeholder) == 2
    return data.replace(placeholder, raw_name)


def test_names_without_the_utf8_flag_are_read_as_unzip_tools_do(tmp_path):
    utf8 = "Übung_é".encode()
    upload = _zip_bytes({"Q" * len(utf8) + ".ipynb": filled(), "caf_.txt": b"cp437"})
    upload = _without_utf8_flag(upload, b"Q" * len(utf8), utf8)            # UTF-8 bytes, no flag (macOS, Linux)
    upload = _without_utf8_flag(upload, b"caf_.txt", b"caf\x82.txt")        # genuine cp437: 0x82 is é
    data = _zip_bytes({"zoQQ_9_91_hw.zip": upload, "ann_8_81_toy_add.ipynb": filled()})
    download = tmp_path / "canvas.zip"
    download.write_bytes(_without_utf8_flag(data, b"zoQQ", "zoë".encode()))
    with zipfile.ZipFile(download) as handle:
        assert not any(i.flag_bits & archives.UTF8_FLAG for i in handle.infolist())
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert report.submissions["zoe"]["name"] == "zoë"  # not 'zoÃ«'
    files = sorted(p.name for p in (out / "zoe" / "toy_add").iterdir())
    assert files == ["café.txt", "toy_add.ipynb"], files
    assert any("graded Übung_é.ipynb as toy_add.ipynb" in n for n in report.submissions["zoe"]["notes"])


def test_zip_entry_times_are_not_presented_as_utc(tmp_path):
    download = _canvas_zip(tmp_path / "canvas.zip", {"ann_11_101_toy_add.ipynb": filled()},
                           times={"ann_11_101_toy_add.ipynb": (2026, 5, 1, 23, 58, 0)})
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    meta = report.submissions["ann"]
    assert meta["submitted_at"] is None  # lateness comes from Canvas's _late flag
    assert meta["upload_time"] == "2026-05-01T23:58:00" and "no time zone" in meta["upload_time_source"]
    text = "\n".join(report.lines())
    assert "uploaded 2026-05-01T23:58:00 (ZIP entry time" in text and "UTC" not in text
    saved = json.loads((out / "_collect_report.json").read_text())["submissions"]["ann"]
    assert saved["upload_time"] == "2026-05-01T23:58:00" and saved["submitted_at"] is None


def test_py_upload_goes_to_unmatched_and_the_feedback_says_so(tmp_path):
    download = _canvas_zip(tmp_path / "canvas.zip", {
        "ann_11_101_toy_add.ipynb": filled(),
        "ann_11_102_utils.py": b"def helper():\n    return 1\n",
    })
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out)
    assert sorted(p.name for p in (out / "ann" / "toy_add").iterdir()) == ["toy_add.ipynb"]
    assert (out / "_unmatched" / "ann__toy_add__utils.py").read_bytes().startswith(b"def helper")
    assert ("ann/toy_add/utils.py", "a .py upload: the grader runs the notebook only") in report.unmatched
    _, problem, notes = _place(out / "ann" / "toy_add", tmp_path)
    assert problem is None and any("utils.py was not kept" in n for n in notes)

    folder = tmp_path / "direct" / "bob" / "toy_add"  # a folder not made by collect: placement says it
    folder.mkdir(parents=True)
    (folder / "toy_add.ipynb").write_bytes(filled())
    (folder / "mycode.py").write_text("x = 1\n")
    _, problem, notes = _place(folder, tmp_path)
    assert problem is None and any(n.startswith("mycode.py: a .py file is not used in grading") for n in notes)


def test_autograde_on_a_zip_says_run_collect_first(tmp_path):
    from autograder.outcome import SubmissionLayoutError

    download = _canvas_zip(tmp_path / "canvas.zip", {"ann_11_101_toy_add.ipynb": filled()})
    with pytest.raises(SubmissionLayoutError) as error:
        discover(download, ["toy_add"])
    assert "is a ZIP file" in str(error.value) and "python -m autograder collect" in str(error.value)
    with pytest.raises(SubmissionLayoutError, match="does not exist"):
        discover(tmp_path / "nowhere", ["toy_add"])


# --------------------------------------------------------------------------------------
# Bad input: everything listed, nothing overwritten or deleted without a line
# --------------------------------------------------------------------------------------


def test_every_upload_collect_cannot_place_is_listed(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "ann_11_101_toy_add.ipynb").write_bytes(filled())
    (raw / "README.txt").write_text("instructions")
    (raw / "stray_folder").mkdir()
    (raw / "stray_folder" / "notes.md").write_text("no notebook here")
    os.symlink("/etc/passwd", raw / "link_12_121_toy_add.ipynb")
    (raw / "nobook_13_131_essay.pdf").write_bytes(b"%PDF")
    (raw / "huge_14_141_toy_add.ipynb").write_bytes(b" " * (3 * 2**20))
    out = tmp_path / "subs"
    report = collect(raw, "toy_add", out, max_mb=2)
    listed = dict(report.unmatched)
    assert listed["README.txt"] == "file name matches no LMS convention"
    assert listed["stray_folder"] == "a folder with no notebook and no LMS naming"
    assert listed["link_12_121_toy_add.ipynb"].startswith("not a regular file")
    assert listed["nobook/"] == "no notebook among this student's files"
    assert "over the 2 MiB limit" in listed["huge_14_141_toy_add.ipynb"]
    assert (out / "_unmatched" / "README.txt").exists() and (out / "_unmatched" / "stray_folder" / "notes.md").exists()
    lines = "\n".join(report.lines())
    for path in listed:
        assert f"unmatched: {path} (" in lines

    # the same download again: what an earlier collect wrote is replaced with a line, never silently
    (raw / "README.txt").write_text("changed instructions")
    again = collect(raw, "toy_add", out, max_mb=2)
    assert any(line.startswith("ann/toy_add/ (1 file(s)) from an earlier collect") for line in again.replaced)
    assert any("_unmatched/README.txt from an earlier collect is kept" in line for line in again.replaced)
    assert (out / "_unmatched" / "README.txt").read_text() == "instructions"
    assert (out / "_unmatched" / "README-2.txt").read_text() == "changed instructions"
    assert "replaced: ann/toy_add/" in "\n".join(again.lines())


def test_refused_members_of_the_download_are_listed(tmp_path):
    download = tmp_path / "canvas.zip"
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("ann_11_101_toy_add.ipynb", filled())
        with handle.open("big_7_71_data.bin", "w") as member:
            for _ in range(40):
                member.write(b"\0" * 2**20)
        handle.writestr("../evil_8_81_toy_add.ipynb", filled())
    out = tmp_path / "subs"
    report = collect(download, "toy_add", out, max_mb=20)
    listed = dict(report.unmatched)
    assert "zip bomb" in listed["big_7_71_data.bin"] or "over the 20 MiB" in listed["big_7_71_data.bin"]
    assert listed["../evil_8_81_toy_add.ipynb"] == "a path outside the archive: not extracted"
    assert set(report.students) == {"ann"}
    assert not (tmp_path / "evil_8_81_toy_add.ipynb").exists()


def test_nothing_else_is_written_and_reports_merge(tmp_path):
    first = _canvas_zip(tmp_path / "a.zip", {"ann_11_101_toy_add.ipynb": filled()})
    second = _canvas_zip(tmp_path / "b.zip", {"bob_12_201_toy_add.ipynb": filled()})
    out = tmp_path / "subs"
    collect(first, "toy_add", out)
    collect(second, "toy_add", out)
    saved = json.loads((out / "_collect_report.json").read_text())
    assert set(saved["submissions"]) == {"ann", "bob"} and set(saved["intake_notes"]) == {"ann", "bob"}
    other = _canvas_zip(tmp_path / "c.zip", {"ann_11_301_maxent_irl.ipynb": filled()})
    collect(other, "maxent_irl", out)  # another assignment: the first one's record stays
    saved = json.loads((out / "_collect_report.json").read_text())
    assert set(saved["by_assignment"]["ann"]) == {"toy_add", "maxent_irl"}
    assert set(saved["intake_notes"]["ann"]) == {"toy_add", "maxent_irl"}
    (tmp_path / "c.zip").unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip", "b.zip", "subs"]
    nbformat.validate(nbformat.read(out / "ann" / "toy_add" / "toy_add.ipynb", as_version=4))


def test_lateness_is_found_wherever_the_notebook_sits(tmp_path):
    """Issue 31: a notebook in a subfolder, or only the pack zip, gave no submission time, so late work
    escaped the penalty while a peer with the notebook on top was penalised."""
    from datetime import UTC, datetime

    from autograder.intake.placement import submission_time

    late = datetime(2026, 5, 2, 12, 0, tzinfo=UTC).timestamp()
    uploads = {"on_top": "toy_add.ipynb", "in_a_folder": "my work/toy_add.ipynb",
               "packed": "toy_add_submission.zip"}
    for student, relative in uploads.items():
        path = tmp_path / student / relative
        path.parent.mkdir(parents=True)
        path.write_bytes(filled() if path.suffix == ".ipynb" else _zip_bytes({"toy_add.ipynb": filled()}))
        os.utime(path, (late, late))
        timestamp = tmp_path / student / "timestamp.txt"  # the student's own claim: never read
        timestamp.write_text("2026-01-01 00:00:00 UTC")
        os.utime(timestamp, (0, 0))
    for student in uploads:
        when, flag, source = submission_time(tmp_path / student, "toy_add.ipynb")
        assert when == datetime(2026, 5, 2, 12, 0, tzinfo=UTC) and flag is None, student
        assert source == "file modification time"


def test_pasted_images_past_the_limits_are_dropped_with_a_line():
    """Issue 31: 96 MB of images pasted into written answers made a 92 MB feedback page."""
    from autograder.intake.repair import MAX_ATTACHMENT_CHARS, repair

    release = nbformat.read(RELEASE, as_version=4)
    submitted = nbformat.reads(filled().decode(), as_version=4)
    answer = next(c for c in submitted.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q_why")
    small = "iVBORw0KGgo" + "A" * 1000
    answer.source += "\n![a](attachment:a.png) ![b](attachment:b.png) ![c](attachment:c.png)"
    answer["attachments"] = {"a.png": {"image/png": small}, "b.png": {"image/png": "A" * (MAX_ATTACHMENT_CHARS + 4)},
                             **{f"p{i}.png": {"image/png": "A" * 2_900_000} for i in range(6)}}
    fixed, notes = repair(submitted, release)
    kept = next(c for c in fixed.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q_why")["attachments"]
    assert "a.png" in kept and "b.png" not in kept and len(kept) == 5  # a, then p0-p3 until 12 MB of text
    line = next(n for n in notes if "too large to keep" in n)
    assert line.startswith("3 image(s) pasted into written answers") and "b.png (2.3 MB)" in line
    assert sum(len(t) for d in kept.values() for t in d.values()) <= 12_000_000
