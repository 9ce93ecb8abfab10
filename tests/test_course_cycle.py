"""The instructor's whole course cycle on the real ``maxent_irl`` (issue 19), through the commands
as the README prints them:

    python -m autograder collect canvas.zip --assignment maxent_irl --out SUBS
    python -m autograder autograde SUBS --out OUT --workers 2 --deadline ... --late-penalty ...
    python -m autograder formgrader OUT        # written grades and comments, via formgrader's HTTP API
    python -m autograder grades OUT

A Canvas-style download of 12 students (correct, partial and blank code; written answers filled,
partly blank and blank; a re-upload; a late one; a ``.py`` upload; two notebooks; a non-ASCII name
without ZIP's UTF-8 flag; no notebook at all) and, at the end, every student's exact LMS row
(autograded + written - late penalty), one total and the comment on each feedback page, and
``nbgrader export`` agreeing with grades.csv.

The re-upload, the two notebooks and the ``.py`` upload are built so the grades are the same
whichever way ``collect`` treats them (keeps the newest and sets the rest aside, or copies them in
download order, the newest last): the newest upload is the right one and comes last in the download.
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from formgrader_client import Formgrader, text_of

REPO = Path(__file__).resolve().parents[1]
ID = "maxent_irl"
DEADLINE = "2026-11-20T23:59:00Z"
PENALTY = 0.25
AUTO, WRITTEN = 28.0, 12.0  # maxent_irl's autograded and written points (4 written answers of 3)
BLANK = "YOUR ANSWER HERE"  # what the release holds in a written answer nobody touched
ON_TIME = (2026, 11, 20, 10, 0, 0)  # ZIP entry times (the download's own clock)

# Canvas login -> what they uploaded and what the grader gives them in formgrader.
# code: "correct" (the solution), "partial" (the demo's buggy forward pass: 18 of 28), "blank".
# written: per answer q1..q4 the grader's points; None = the student left it blank (nbgrader: 0).
STUDENTS = {
    "alice": dict(uid=101, code="correct", written=[3, 3, 3, 2.5], auto=28),
    "bob": dict(uid=102, code="correct", written=[3, 2, None, None], auto=28),
    "carol": dict(uid=103, code="correct", written=[None] * 4, auto=28),
    "dave": dict(uid=104, code="partial", written=[3, 3, 3, 3], auto=18),
    "erin": dict(uid=105, code="blank", written=[None] * 4, auto=0),
    "frank": dict(uid=106, code="correct", written=[3, 3, 3, 3], auto=28, late=True),
    "gina": dict(uid=107, code="correct", written=[3, 3, 2, 1], auto=28, reupload=True),
    "hank": dict(uid=108, upload="py", auto=0),
    "ivan": dict(uid=109, code="correct", written=[2, 2, 2, 2], auto=28, two_notebooks=True),
    "müllerzoë": dict(uid=110, code="correct", written=[3, 3, 3, 3], auto=28, no_utf8_flag=True),
    "kim": dict(uid=111, upload="txt", auto=0),
    "lena": dict(uid=112, code="correct", written=[3, 3, 2, 1], auto=28, graded_later=["q3", "q4"]),
}


class NoUtf8Flag(zipfile.ZipInfo):
    """A ZIP entry whose UTF-8 name does not set the UTF-8 flag (bit 11), as some ZIP tools write
    them: readers that follow the format decode the name as cp437."""

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's name
        return self.filename.encode("utf-8"), self.flag_bits


def _notebook(release: Path, solution: Path, tmp: Path, code: str, written: list | None) -> bytes:
    from autograder.authoring.course import fill_release
    from autograder.manifest import load_assignments

    if code == "blank" and all(w is None for w in written or [None]):
        return release.read_bytes()
    patches = []
    if code == "partial":
        patches = [p for a in load_assignments() if a.id == ID for p in a.demo.buggy_patches]
    replace = {f"q{i + 1}": BLANK for i, points in enumerate(written or []) if points is None}
    target = tmp / "notebook.ipynb"
    fill_release(release, solution, target, patches=patches, replace=replace)
    return target.read_bytes()


def _canvas_download(path: Path, tmp: Path) -> None:
    release = REPO / "notebooks" / ID / f"{ID}.ipynb"
    solution = REPO / "solutions" / ID / f"{ID}.ipynb"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        def put(name: str, data: bytes, when=ON_TIME, info=zipfile.ZipInfo) -> None:
            entry = info(name, date_time=when)
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)

        for login, s in STUDENTS.items():
            uid, sid = s["uid"], 2000 + s["uid"]
            late = "_late" if s.get("late") else ""
            prefix = f"{login}{late}_{uid}_"
            if s.get("upload") == "py":
                put(f"{prefix}{sid}_{ID}.py", b"def feature_expectation_from_trajectories(f, demos):\n    pass\n")
                continue
            if s.get("upload") == "txt":
                put(f"{prefix}{sid}_notes.txt", b"I could not get the notebook to run.\n")
                continue
            notebook = _notebook(release, solution, tmp, s["code"], s["written"])
            if s.get("reupload"):  # the first upload (blank), then Canvas's -1 copy with a newer id and time
                put(f"{prefix}{sid}_{ID}.ipynb", release.read_bytes(), (2026, 11, 19, 8, 0, 0))
                put(f"{prefix}{sid + 100}_{ID}-1.ipynb", notebook, (2026, 11, 20, 9, 0, 0))
            elif s.get("two_notebooks"):  # an older scratch notebook besides the real one
                put(f"{prefix}{sid}_scratch.ipynb", release.read_bytes(), (2026, 11, 18, 10, 0, 0))
                put(f"{prefix}{sid + 100}_{ID}.ipynb", notebook, (2026, 11, 20, 11, 0, 0))
            elif s.get("no_utf8_flag"):
                put(f"{prefix}{sid}_{ID}.ipynb", notebook, info=NoUtf8Flag)
            elif s.get("late"):
                put(f"{prefix}{sid}_{ID}.ipynb", notebook, (2026, 11, 21, 9, 0, 0))
            else:
                put(f"{prefix}{sid}_{ID}.ipynb", notebook)
            if login == "ivan":  # a .py export uploaded next to the notebook
                put(f"{prefix}{sid + 200}_{ID}.py", b"# exported from the notebook\n")


def expected(login: str, complete: bool = True) -> dict:
    """The LMS row this student must end with: autograded + written - late penalty."""
    s = STUDENTS[login]
    auto = float(s["auto"])
    written = s.get("written")
    if written is None:  # no notebook: nothing to grade, the written answers count 0
        manual = 0.0
    else:
        pending = set(s.get("graded_later", [])) if not complete else set()
        manual = None if pending else float(sum(p or 0 for p in written))
    penalty = round(auto * PENALTY, 6) if s.get("late") else 0.0
    points = auto + (manual or 0.0) - penalty
    return {"points": f"{points:g}", "max_points": f"{AUTO + WRITTEN:g}", "autograded": f"{auto:g}",
            "manual": "" if manual is None else f"{manual:g}", "late_penalty": f"{penalty:g}",
            "manual_graded": "no" if manual is None else "yes", "late": "late" if s.get("late") else ""}


def _run(*args, cwd=None) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True)
    assert run.returncode == 0, f"{' '.join(args)}\n{run.stdout}\n{run.stderr}"
    return run


def _lms_rows(out: Path) -> dict:
    return {int(r["lms_user_id"]): r for r in csv.DictReader(open(out / "lms_grades.csv"))}


@pytest.fixture(scope="module")
def cycle(tmp_path_factory):
    root = tmp_path_factory.mktemp("cycle")
    download, subs, out = root / "submissions.zip", root / "subs", root / "out"
    _canvas_download(download, root)
    collected = _run("autograder", "collect", str(download), "--assignment", ID, "--out", str(subs))
    graded = _run("autograder", "autograde", str(subs), "--out", str(out), "--profile", "tiny", "--workers", "2",
                  "--assignment", ID, "--deadline", DEADLINE, "--late-penalty", str(PENALTY))
    report = json.loads((subs / "_collect_report.json").read_text())
    folders = {int(meta["user_id"]): folder for folder, meta in report["submissions"].items()}
    return {"root": root, "subs": subs, "out": out, "collected": collected, "graded": graded,
            "folder": {login: folders[s["uid"]] for login, s in STUDENTS.items()}, "report": report}


def _written_grading(server: Formgrader, folder: dict, later: bool) -> None:
    """What an instructor does in formgrader: a score for every written answer a student wrote and
    a comment for everyone; ``later``: the answers left for a second sitting."""
    submissions = server.submissions(ID, ID)
    for login, s in STUDENTS.items():
        if "written" not in s:
            continue
        sid = submissions[folder[login]]["id"]
        grades = server.grades(sid)
        for i, points in enumerate(s["written"]):
            name = f"q{i + 1}"
            if points is None or (name in s.get("graded_later", [])) != later:
                continue
            assert server.grade(grades[name], points)["manual_score"] == points
        if not later:
            server.comment(server.comments(sid)["q1"], f"Note for {login}: see the model answer.")


@pytest.mark.slow
def test_course_cycle(cycle):
    from autograder.intake import collector as intake_collector

    out, folder = cycle["out"], cycle["folder"]
    rows = _lms_rows(out)
    assert sorted(rows) == sorted(s["uid"] for s in STUDENTS.values())
    # after autograde alone: autograded points (minus the late penalty), blank written answers 0
    assert rows[STUDENTS["carol"]["uid"]]["manual"] == "0" and rows[STUDENTS["erin"]["uid"]]["points"] == "0"
    assert rows[STUDENTS["frank"]["uid"]]["late_penalty"] == f"{AUTO * PENALTY:g}"

    for path in sorted(out.glob(f"autograded/*/{ID}/{ID}.ipynb")):  # formgrader opens these
        nbformat.validate(nbformat.read(path, as_version=4))
    assert len(list(out.glob(f"autograded/*/{ID}/{ID}.ipynb"))) == 10  # everyone but hank and kim

    server = Formgrader(out)
    try:
        submissions = server.submissions(ID, ID)
        status, page = server.request(f"/formgrader/submissions/{submissions[folder['alice']]['id']}/")
        assert status == 200 and "Notebook JSON is invalid" not in page
        needs = {login: submissions.get(folder[login], {}).get("needs_manual_grade", False) for login in STUDENTS}
        assert needs == {login: any(p is not None for p in s.get("written", [None])) for login, s in STUDENTS.items()}
        _written_grading(server, folder, later=False)
        first = _run("autograder", "grades", str(out))
        assert "11 of 12 submissions complete, 1 still to grade" in first.stdout, first.stdout
        assert f"  {folder['lena']}/{ID}: q3, q4" in first.stdout, first.stdout
        lena = _lms_rows(out)[STUDENTS["lena"]["uid"]]
        assert {k: lena[k] for k in expected("lena", complete=False)} == expected("lena", complete=False)
        _written_grading(server, folder, later=True)
    finally:
        assert server.stop() == 0
    final = _run("autograder", "grades", str(out))
    assert "12 of 12 submissions complete, 0 still to grade" in final.stdout, final.stdout
    assert "warning" not in final.stderr, final.stderr

    rows = _lms_rows(out)
    for login, s in STUDENTS.items():
        row = rows[s["uid"]]
        want = expected(login)
        assert {k: row[k] for k in want} == want, login
        assert (row["lms"], row["student"], row["assignment"]) == ("canvas", folder[login], ID)
    for login in ("hank", "kim"):
        assert rows[STUDENTS[login]["uid"]]["status"] == "missing", login
    # the non-ASCII login: Canvas's name, or what a reader without the UTF-8 flag decodes (cp437)
    name = rows[STUDENTS["müllerzoë"]["uid"]]["name"]
    repairs_names = hasattr(intake_collector, "SET_ASIDE")  # the intake branch's collect mends such names
    assert name == ("müllerzoë" if repairs_names else "müllerzoë".encode().decode("cp437")), name
    assert folder["müllerzoë"].isascii()
    assert rows[STUDENTS["alice"]["uid"]]["name"] == "alice"

    grades = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    for login in STUDENTS:
        row, want = grades[folder[login]], expected(login)
        assert (row["total"], row["manual_score"], row["late_penalty"]) == (
            want["points"], want["manual"], want["late_penalty"]), login

    for login, s in STUDENTS.items():
        page = text_of((out / "feedback" / folder[login] / ID / f"{ID}.html").read_text())
        total = float(expected(login)["points"])
        assert f"total {total:g} / {AUTO + WRITTEN:g}" in page, (login, page[:600])
        if "written" in s:  # nbgrader's part, rebuilt with the grader's scores: the same total, the comment
            assert set(re.findall(r"Score: ([\d.]+) / 40\.0\)", page)) == {f"{total:.1f}"}, login
            assert f"Note for {login}: see the model answer." in page, login
    assert "Late submission penalty" in text_of((out / "feedback" / folder["frank"] / ID / f"{ID}.html").read_text())

    _run("nbgrader", "export", cwd=out)
    exported = {r["student_id"]: r for r in csv.DictReader(open(out / "nbgrader_grades.csv"))}
    for login in STUDENTS:
        row = grades[folder[login]]
        assert float(exported[folder[login]]["score"]) == float(row["total"]), login
        assert float(exported[folder[login]]["late_submission_penalty"]) == float(row["late_penalty"]), login
