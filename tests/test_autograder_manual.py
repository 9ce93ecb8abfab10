"""Manual grading on OUT: formgrader (started by ``python -m autograder formgrader``) opens a
submission, a manual grade and comment are stored, appear in ``grades.csv`` / the LMS file /
nbgrader's export and the feedback page (nbgrader's part rebuilt), and survive a re-run; a blank
written answer counts 0 without blocking the total; the late penalty is nbgrader's own and every
view agrees on it; graded notebooks are valid nbformat. Plus: the README's plain-nbgrader command
works as printed, and the commands refuse a folder that is not a graded OUT."""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from formgrader_client import Formgrader, text_of

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REPO = Path(__file__).resolve().parents[1]
PENALTY = 0.5
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
CAROL_MARKUP = [
    {"grade_id": "q_why", "old": "Because it is.",
     "new": 'Because it is. <script>window.fgxss = 1</script><img src=x onerror="window.fgxss = 2"> '
            '[my derivation](javascript:window.fgxss=6) [more](JaVaScRiPt&#58;window.fgxss=7)'},
    {"grade_id": "add", "old": "return a + b",
     "new": "from IPython.display import HTML, Javascript, display\n"
            "    display(HTML('<script>window.fgxss = 3</script><b onmouseover=\"window.fgxss = 4\">b</b>'))\n"
            "    display(Javascript('window.fgxss_js = 5'))\n"
            "    return a + b"},
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder.authoring.course import fill_release
    from autograder.grading.batch import Request, autograde
    from autograder.manifest import load_assignments

    root = tmp_path_factory.mktemp("manual")
    subs = root / "subs"
    release = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
    solution = FIXTURE / "solutions" / "toy_add" / "toy_add.ipynb"
    # alice's written answer shows an image whose attachment she did not include: her page still opens
    fill_release(release, solution, subs / "alice" / "toy_add" / "toy_add.ipynb", patches=[
        {"grade_id": "q_why", "old": "Because it is.", "new": "Because it is. ![gone](attachment:gone.png)"}])
    (subs / "bob" / "toy_add").mkdir(parents=True)
    shutil.copy(release, subs / "bob" / "toy_add" / "toy_add.ipynb")  # blank: code and written answer
    # carol's correct answers also put markup into formgrader's page: a script and an onerror in her
    # written answer, an HTML script and a JavaScript output from her code (see the formgrader test)
    fill_release(release, solution, subs / "carol" / "toy_add" / "toy_add.ipynb", patches=CAROL_MARKUP)
    carol = nbformat.read(subs / "carol" / "toy_add" / "toy_add.ipynb", as_version=4)
    for cell in carol.cells:  # and a figure pasted into her written answer (a notebook attachment)
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "q_why":
            cell.source += "\n\n![my figure](attachment:fig.png)"
            cell["attachments"] = {"fig.png": {"image/png": PIXEL}}
    nbformat.write(carol, subs / "carol" / "toy_add" / "toy_add.ipynb")
    # carol is late by the LMS's own flag, with no submission time (Canvas without ZIP times)
    (subs / "_collect_report.json").write_text(json.dumps({"submissions": {
        "carol": {"lms": "canvas", "user_id": "3", "name": "Carol", "late": True,
                  "timestamp_source": "canvas _late flag"}}}))
    assignments = load_assignments(FIXTURE)
    out = root / "out"
    autograde(subs, out, assignments, Request(workers=2, profile="tiny", deadline="2100-01-01T00:00:00Z",
                                              late_penalty=PENALTY))
    return root, subs, out, assignments


def _rows(path: Path, key: str = "student") -> dict:
    return {r[key]: r for r in csv.DictReader(open(path))}


@pytest.mark.slow
def test_out_is_an_nbgrader_course(graded):
    root, subs, out, assignments = graded
    for path in ("source/toy_add/toy_add.ipynb", "release/toy_add/toy_add.ipynb",
                 "submitted/alice/toy_add/toy_add.ipynb", "autograded/alice/toy_add/toy_add.ipynb", "gradebook.db",
                 "nbgrader_config.py"):
        assert (out / path).exists(), path
    rows = _rows(out / "grades.csv")
    alice, bob = rows["alice"], rows["bob"]
    assert (alice["score"], alice["manual_score"], alice["manual_max"], alice["total_max"]) == ("2", "", "1", "3")
    # bob's blank written answer: nbgrader scored it 0 itself, so it does not wait for a person
    assert (bob["score"], bob["manual_score"], bob["total"]) == ("0", "0", "0")
    page = (out / "feedback" / "alice" / "toy_add" / "toy_add.html").read_text()
    # issue 31: one total everywhere while a written answer is open, nbgrader's heading included
    assert "autograded 2 / 2" in page and "written answers: not graded yet (1 points pending); total so far 2 / 3" \
        in page
    assert "(Score so far: 2 / 3, written answers pending)" in page
    assert not re.search(r"\(Score: [0-9.]+ / 3\.0\)", page)
    # issue 41: her open answer is "not yet" in the contents and on its cell, never "Score: 0.0 / 1.0"
    assert "Score: 0.0 / 1.0" not in page and page.count("graded by hand, not yet, 1 points") == 2
    gradescope = json.loads((out / "feedback" / "alice" / "toy_add" / "results.json").read_text())
    assert "score: the autograded points only (2); the written answers (1 points) are graded by hand" \
        in gradescope["output"]
    _no_active_content((out / "feedback" / "carol" / "toy_add" / "toy_add.html").read_text())


def _no_active_content(page: str) -> None:
    """Issue 31: feedback pages kept a code cell's <script>, onerror handlers and JavaScript outputs."""
    assert "fgxss" in page  # carol's markup is there, as text
    assert "<script>window.fgxss" not in page and "window.fgxss_js = 5\n" not in page
    assert not re.search(r"<[^>]*\bon(error|mouseover)=", page), "an event handler attribute got through"
    assert not re.search(r"href\s*=\s*[\"']?\s*javascript", page, re.IGNORECASE), "a javascript: link got through"


@pytest.mark.slow
def test_graded_notebooks_are_valid_nbformat(graded):
    """formgrader refused graded notebooks whose markdown cells carried `outputs`."""
    root, subs, out, assignments = graded
    for path in sorted(out.glob("autograded/*/*/*.ipynb")):
        nbformat.validate(nbformat.read(path, as_version=4))
        assert all("outputs" not in cell for cell in json.loads(path.read_text())["cells"]
                   if cell["cell_type"] != "code"), path


@pytest.mark.slow
def test_late_penalty_is_nbgraders_and_every_view_agrees(graded):
    from nbgrader.api import Gradebook

    root, subs, out, assignments = graded
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        carol = gb.find_submission_notebook("toy_add", "toy_add", "carol")
        assert carol.late_submission_penalty == pytest.approx(PENALTY * 2)  # half of the 2 autograded points
        assert not gb.find_submission_notebook("toy_add", "toy_add", "alice").late_submission_penalty
        assert gb.find_submission("toy_add", "carol").timestamp is None  # no stand-in time reaches OUT
    assert not (out / "submitted" / "carol" / "toy_add" / "timestamp.txt").exists()
    row = _rows(out / "grades.csv")["carol"]
    assert (row["score"], row["late_penalty"], row["late"], row["manual_score"]) == ("2", "1", "late", "")
    result = json.loads((out / "feedback" / "carol" / "toy_add" / "result.json").read_text())
    assert result["score"] == 2 and result["late_penalty"] == 1
    assert any(line.startswith("late (") and "50% of the autograded points deducted (1 points)" in line
               for line in result["feedback"])
    lms = _rows(out / "lms_grades.csv")["carol"]
    assert (lms["lms_user_id"], lms["name"], lms["points"], lms["late_penalty"]) == ("3", "Carol", "1", "1")
    from autograder.reports.formgrader import late_lines

    # formgrader's score columns leave the penalty out (issue 31): the command says so beside them
    assert [line.strip() for line in late_lines(out)][1:] == ["carol/toy_add: -1"]


@pytest.mark.slow
def test_formgrader_grade_and_comment_reach_every_view(graded):
    from nbgrader.api import Gradebook

    root, subs, out, assignments = graded
    server = Formgrader(out)
    try:
        status, page = server.request(f"/formgrader?token={server.token}")
        assert status == 200 and "toy_add" in server.request("/formgrader/api/assignments")[1]
        second = subprocess.run([sys.executable, "-m", "autograder", "formgrader", str(out), "--port", "0"],
                                capture_output=True, text=True, timeout=120)  # issue 41: refused, with one line
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert "already running" in second.stderr and server.base in second.stderr and server.token not in second.stderr
        submissions = server.submissions("toy_add", "toy_add")
        # bob's blank answer is already scored (0) by nbgrader: nothing for a person to grade
        assert {s: e["needs_manual_grade"] for s, e in submissions.items()} == {
            "alice": True, "bob": False, "carol": True}
        status, page = server.request(f"/formgrader/submissions/{submissions['alice']['id']}/")
        text = text_of(page)
        assert status == 200 and "return a + b" in text and "hidden tests run here" in text and "q_why" in page
        assert "Notebook JSON is invalid" not in text
        assert "add(-5, 5)" not in text  # formgrader shows the autograded copy: hidden tests already removed
        # carol's markup is shown as text, never run in the grader's browser (nbconvert's sanitizer)
        status, page = server.request(f"/formgrader/submissions/{submissions['carol']['id']}/")
        assert status == 200 and "Because it is." in text_of(page)
        assert "<script>window.fgxss" not in page and "&lt;script&gt;window.fgxss = 1" in page
        assert not re.search(r"<[^>]*\bon(error|mouseover)=", page), "an event handler attribute got through"
        assert not re.search(r"href\s*=\s*[\"']?\s*javascript", page, re.IGNORECASE), "a javascript: link got through"
        assert "my derivation" in text_of(page)
        assert f'<img alt="my figure" src="data:image/png;base64,{PIXEL}"' in page or \
            f'<img src="data:image/png;base64,{PIXEL}" alt="my figure"' in page  # her figure, shown
        assert "output_javascript" not in page and "window.fgxss_js = 5\n" not in page
        assert server.request("/api/terminals", method="POST")[0] == 404  # no terminals on this server
        for student, score in (("alice", 1), ("carol", 1)):
            sid = submissions[student]["id"]
            assert server.grade(server.grades(sid)["q_why"], score)["manual_score"] == score
        comment = server.comments(submissions["alice"]["id"])["q_why"]
        server.comment(comment, "Commutativity, said plainly: well put.")
        # formgrader's own "Generate Feedback" button (issue 31: it deleted every result.json and the
        # kit's summary from feedback/): nbgrader's pages go to a folder of their own
        done = server.json("/formgrader/api/assignment/toy_add/generate_feedback", method="POST", body={})
        assert done["success"], done
        assert (out / "nbgrader_feedback" / "alice" / "toy_add" / "toy_add.html").exists()
        assert (out / "feedback" / "alice" / "toy_add" / "result.json").exists()
        assert "autograded 2 / 2" in (out / "feedback" / "alice" / "toy_add" / "toy_add.html").read_text()
    finally:
        assert server.stop() == 0
    with pytest.raises(OSError):  # Ctrl-C stopped the server too
        import urllib.request

        urllib.request.urlopen(f"{server.base}/api/status", timeout=5)

    run = subprocess.run([sys.executable, "-m", "autograder", "grades", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 of 1 submissions complete" not in run.stdout and "0 still to grade" in run.stdout, run.stdout
    rows = _rows(out / "grades.csv")
    assert (rows["alice"]["manual_score"], rows["alice"]["total"], rows["alice"]["total_max"]) == ("1", "3", "3")
    assert (rows["bob"]["manual_score"], rows["bob"]["total"]) == ("0", "0")
    assert (rows["carol"]["manual_score"], rows["carol"]["late_penalty"], rows["carol"]["total"]) == ("1", "1", "2")
    lms = _rows(out / "lms_grades.csv")
    assert (lms["alice"]["points"], lms["alice"]["manual_graded"]) == ("3", "yes")
    assert (lms["carol"]["points"], lms["carol"]["manual"], lms["carol"]["late_penalty"]) == ("2", "1", "1")
    page = (out / "feedback" / "alice" / "toy_add" / "toy_add.html").read_text()
    text = text_of(page)
    assert "written answers: 1 / 1; total 3 / 3" in page and "add(-5, 5)" not in text
    assert "toy_add (Score: 3.0 / 3.0)" in text  # nbgrader's part rebuilt with the grader's score
    assert "Commutativity, said plainly: well put." in text
    _no_active_content((out / "feedback" / "carol" / "toy_add" / "toy_add.html").read_text())
    carol = text_of((out / "feedback" / "carol" / "toy_add" / "toy_add.html").read_text())
    assert "total 2 / 3" in carol and "toy_add (Score: 2.0 / 3.0)" in carol and "Late submission penalty" in carol
    assert json.loads((out / "feedback" / "alice" / "toy_add" / "result.json").read_text())["manual_score"] == 1

    before = (out / "grades.csv").read_text()
    export = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=out, capture_output=True, text=True)
    assert export.returncode == 0, export.stdout + export.stderr
    assert (out / "grades.csv").read_text() == before  # nbgrader's export cannot clobber ours
    exported = _rows(out / "nbgrader_grades.csv", "student_id")
    for student, row in _rows(out / "grades.csv").items():
        assert float(exported[student]["score"]) == float(row["total"]), student
        assert float(exported[student]["late_submission_penalty"]) == float(row["late_penalty"]), student

    from autograder.grading.batch import Request, autograde

    autograde(subs, out, assignments, Request(workers=1, profile="tiny", deadline="2100-01-01T00:00:00Z",
                                              late_penalty=PENALTY))  # a re-run never un-grades
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook("toy_add", "toy_add", "alice")
        grade = next(g for g in notebook.grades if g.name == "q_why")
        assert grade.manual_score == 1 and not grade.needs_manual_grade
    rows = _rows(out / "grades.csv")
    assert rows["alice"]["manual_score"] == "1" and rows["alice"]["total"] == "3"
    assert rows["carol"]["total"] == "2"


def test_commands_refuse_a_folder_that_is_not_graded(tmp_path):
    (tmp_path / "grades.csv").write_text("mine\n")
    for command in ("grades", "formgrader"):
        run = subprocess.run([sys.executable, "-m", "autograder", command, str(tmp_path)], capture_output=True,
                             text=True)
        assert run.returncode == 2 and run.stdout == "", run.stdout + run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "python -m autograder autograde SUBMISSIONS --out" in lines[0], run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]  # nothing written or removed
    assert (tmp_path / "grades.csv").read_text() == "mine\n"
    # issue 31: on a submissions folder the hint said `autograde SUBMISSIONS --out <that same folder>`
    subs = tmp_path / "subs"
    (subs / "ann" / "toy_add").mkdir(parents=True)
    shutil.copy(FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb", subs / "ann" / "toy_add" / "toy_add.ipynb")
    run = subprocess.run([sys.executable, "-m", "autograder", "grades", str(subs)], capture_output=True, text=True)
    assert run.returncode == 2 and f"autograde {subs} --out GRADED" in run.stderr and f"--out {subs}" not in run.stderr


def test_graded_notebooks_from_an_older_grader_are_repaired(tmp_path):
    from autograder.reports.grades import repair_graded

    source = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
    raw = json.loads(source.read_text())
    for cell in raw["cells"]:
        if cell["cell_type"] == "markdown":
            cell["outputs"] = []
    target = tmp_path / "autograded" / "alice" / "toy_add" / "toy_add.ipynb"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(raw))
    said = []
    assert repair_graded(tmp_path, said.append) == 1 and "repaired 1 graded notebook" in said[0]
    nbformat.validate(nbformat.read(target, as_version=4))
    assert repair_graded(tmp_path, said.append) == 0 and len(said) == 1


def test_plain_nbgrader_with_the_repository_config(tmp_path):
    """The README's plain-nbgrader command, as printed, from the root: it rewrites a release that
    exists (without --force nbgrader skipped it and did nothing)."""
    import shlex

    printed = re.search(r"`(nbgrader generate_assignment maxent_irl [^`]*)`", (REPO / "README.md").read_text())
    assert printed, "the README's plain-nbgrader command is gone"
    argv = shlex.split(printed.group(1).replace("maxent_irl", "toy_add"))
    (tmp_path / "autograder").mkdir()
    shutil.copy(REPO / "autograder" / "nbgrader_by_hand.py", tmp_path / "autograder" / "nbgrader_by_hand.py")
    shutil.copytree(FIXTURE / "solutions", tmp_path / "solutions")
    (tmp_path / "notebooks" / "toy_add").mkdir(parents=True)
    (tmp_path / "notebooks" / "toy_add" / "toy_add.ipynb").write_text("{}")  # an older release
    import os

    venv = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    run = subprocess.run([sys.executable, "-m", *argv], cwd=tmp_path, capture_output=True, text=True, env=venv)
    assert run.returncode == 0, run.stdout + run.stderr
    text = (tmp_path / "notebooks" / "toy_add" / "toy_add.ipynb").read_text()
    assert "raise NotImplementedError()" in text and "add(-5, 5)" not in text
