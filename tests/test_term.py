"""A whole term's loop on the real ``maxent_irl`` (issue 41), through the commands as the README prints them:

    python -m autograder collect canvas.zip --assignment maxent_irl --out SUBS
    python -m autograder autograde SUBS --out OUT --deadline ... --late-penalty ... --extensions ext.csv
    python -m autograder autograde SUBS --out OUT --only dave        # after dave's fix
    python -m autograder grades OUT --canvas-gradebook export.csv
    python -m autograder return OUT
    python -m autograder stats OUT

Three Canvas students: alice (correct, on time), frank (correct, late, with an approved extension past his
upload), dave (the demo's buggy forward pass, then regraded after the course staff fixed his upload).
"""
from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest
from test_course_cycle import ID, ON_TIME, REPO, _notebook, _run

pytestmark = pytest.mark.slow
DEADLINE, PENALTY = "2026-11-20T23:59:00Z", 0.25
STUDENTS = {"alice": (201, "correct", ON_TIME), "frank": (202, "correct", (2026, 11, 21, 9, 0, 0)),
            "dave": (203, "partial", ON_TIME)}
EXPORT_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz 1 (100)",
                 f"{ID} (12345)", "Current Score"]


def canvas_download(path: Path, tmp: Path) -> dict:
    """The download; {login: the graded file's name in it}."""
    release, solution = REPO / "notebooks" / ID / f"{ID}.ipynb", REPO / "solutions" / ID / f"{ID}.ipynb"
    names = {}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for login, (uid, code, when) in STUDENTS.items():
            late = "_late" if login == "frank" else ""
            names[login] = f"{login}{late}_{uid}_{uid + 5000}_{ID}.ipynb"
            entry = zipfile.ZipInfo(names[login], date_time=when)
            archive.writestr(entry, _notebook(release, solution, tmp, code, [3, 3, 3, 3]))
    return names


def canvas_export(path: Path) -> None:
    rows = [EXPORT_HEADER, ["    Points Possible", "", "", "", "", "10", "40", "(read only)"]]
    rows += [[f"{login.title()} Smith", str(uid), f"sis{uid}", login, "Section A", "9", "", "90"]
             for login, (uid, _, _) in STUDENTS.items()]
    rows.append(["Zed Absent", "299", "sis299", "zed", "Section A", "7", "", "70"])
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    download, subs, out = root / "canvas.zip", root / "subs", root / "out"
    names = canvas_download(download, root)
    _run("autograder", "collect", str(download), "--assignment", ID, "--out", str(subs))
    report = json.loads((subs / "_collect_report.json").read_text())
    folder = {login: next(f for f, m in report["submissions"].items() if int(m["user_id"]) == uid)
              for login, (uid, _, _) in STUDENTS.items()}
    (root / "ext.csv").write_text(f"student,deadline\n{folder['frank']},2026-11-22T12:00:00Z\n")
    first = _run("autograder", "autograde", str(subs), "--out", str(out), "--profile", "tiny", "--assignment", ID,
                 "--deadline", DEADLINE, "--late-penalty", str(PENALTY), "--extensions", str(root / "ext.csv"))
    before = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    fixed = subs / folder["dave"] / ID / f"{ID}.ipynb"   # the staff fix dave's upload, then regrade him alone
    fixed.write_bytes(_notebook(REPO / "notebooks" / ID / f"{ID}.ipynb", REPO / "solutions" / ID / f"{ID}.ipynb",
                                root, "correct", [3, 3, 3, 3]))
    regrade = _run("autograder", "autograde", str(subs), "--out", str(out), "--profile", "tiny", "--assignment", ID,
                   "--deadline", DEADLINE, "--late-penalty", str(PENALTY), "--only", folder["dave"])
    canvas_export(root / "export.csv")
    grades = _run("autograder", "grades", str(out), "--canvas-gradebook", str(root / "export.csv"))
    returned = _run("autograder", "return", str(out))
    stats = _run("autograder", "stats", str(out))
    similar = _run("autograder", "similarity", str(out))
    return dict(root=root, out=out, names=names, folder=folder, first=first, before=before, regrade=regrade,
                grades=grades, returned=returned, stats=stats, similar=similar)


def test_the_extension_student_is_not_penalised(term):
    rows = {r["student"]: r for r in csv.DictReader(open(term["out"] / "grades.csv"))}
    frank = rows[term["folder"]["frank"]]
    assert frank["late"] in ("", "False", "0") and float(frank["late_penalty"]) == 0 and float(frank["total"]) == 28
    result = json.loads((term["out"] / "feedback" / term["folder"]["frank"] / ID / "result.json").read_text())
    assert any("your extension: due 2026-11-22" in line for line in result["feedback"])
    assert "next:" in term["first"].stdout


def test_the_regrade_keeps_everyone_else_and_records_itself(term):
    rows = {r["student"]: r for r in csv.DictReader(open(term["out"] / "grades.csv"))}
    dave, alice = term["folder"]["dave"], term["folder"]["alice"]
    assert float(term["before"][dave]["score"]) == 18 and float(rows[dave]["score"]) == 28
    assert rows[alice] == term["before"][alice]
    result = json.loads((term["out"] / "feedback" / dave / ID / "result.json").read_text())
    assert any(line.startswith("regraded ") and "18 -> 28" in line for line in result["feedback"])


def test_the_canvas_import_has_the_exports_header_and_our_totals(term):
    rows = list(csv.reader(open(term["out"] / "canvas_gradebook_import.csv")))
    assert rows[0] == EXPORT_HEADER and rows[1][0].strip() == "Points Possible"
    by_id = {row[1]: row for row in rows[2:]}
    column = EXPORT_HEADER.index(f"{ID} (12345)")
    assert [by_id[str(uid)][column] for uid, _, _ in STUDENTS.values()] == ["28", "28", "28"]
    assert by_id["299"][column] == "" and by_id["201"][5] == "9"     # other students and columns untouched


def test_the_return_zip_holds_each_students_page_under_their_canvas_file_name(term):
    path = term["out"] / "return" / f"{ID}-canvas.zip"
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == sorted(term["names"].values())
        page = archive.read(term["names"]["dave"]).decode()
    assert "regraded" in page and "<html" in page.lower()
    assert "similarity" not in " ".join(archive.namelist())


def test_the_statistics_page_is_written(term):
    folder = term["out"] / "stats" / ID
    assert (folder / "index.html").is_file() and (folder / "stats.csv").is_file()
    assert f"statistics of {ID}" in term["stats"].stdout


def test_similarity_prints_its_top_pairs(term):
    assert "shared" in term["similar"].stdout and " ~ " in term["similar"].stdout
