"""Manual grading on OUT: formgrader opens a submission, a manual grade is stored, appears in
``grades.csv`` / the LMS file / nbgrader's export and the feedback page, and survives a re-run.
Plus: the README's plain-nbgrader command with ``--NbGrader.config_file=`` works."""
from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _text(page: str) -> str:
    """What a reader sees: tags (syntax highlighting splits code into spans) and entities removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _request(url: str, token: str, method: str = "GET", body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder.manifest import load_assignments
    from autograder.grading.batch import autograde
    from autograder.authoring.course import fill_release

    root = tmp_path_factory.mktemp("manual")
    subs = root / "subs"
    release = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
    fill_release(release, FIXTURE / "solutions" / "toy_add" / "toy_add.ipynb", subs / "alice" / "toy_add" / "toy_add.ipynb")
    (subs / "bob" / "toy_add").mkdir(parents=True)
    shutil.copy(release, subs / "bob" / "toy_add" / "toy_add.ipynb")
    assignments = load_assignments(FIXTURE)
    out = root / "out"
    autograde(subs, out, assignments, workers=2, profile="tiny")
    return root, subs, out, assignments


def test_out_is_an_nbgrader_course(graded):
    root, subs, out, assignments = graded
    for path in ("source/toy_add/toy_add.ipynb", "release/toy_add/toy_add.ipynb", "submitted/alice/toy_add/toy_add.ipynb",
                 "autograded/alice/toy_add/toy_add.ipynb", "gradebook.db", "nbgrader_config.py"):
        assert (out / path).exists(), path
    row = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}["alice"]
    assert (row["score"], row["manual_score"], row["manual_max"], row["total_max"]) == ("2", "", "1", "3")
    page = (out / "feedback" / "alice" / "toy_add" / "toy_add.html").read_text()
    assert "autograded 2 / 2" in page and "written answers: not graded yet (1 points)" in page


def test_formgrader_grade_reaches_grades_csv_export_and_feedback(graded):
    from nbgrader.api import Gradebook

    root, subs, out, assignments = graded
    token, port = "course-kit-test", _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", f"--port={port}", "--ip=127.0.0.1", "--no-browser", "--allow-root",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={out}",
         "--ServerApp.jpserver_extensions={'nbgrader.server_extensions.formgrader': True}"],
        cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "JUPYTER_CONFIG_DIR": str(root / "config")})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if _request(f"{base}/api/status", token)[0] == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("jupyter server did not start: " + (server.stdout.read() if server.poll() is not None else ""))
        status, page = _request(f"{base}/formgrader", token)
        assert status == 200 and "toy_add" in _request(f"{base}/formgrader/api/assignments", token)[1]
        status, body = _request(f"{base}/formgrader/api/submitted_notebooks/toy_add/toy_add", token)
        submission = next(s for s in json.loads(body) if s["student"] == "alice")
        status, page = _request(f"{base}/formgrader/submissions/{submission['id']}/", token)
        text = _text(page)
        assert status == 200 and "return a + b" in text and "hidden tests run here" in text and "q_why" in page
        assert "add(-5, 5)" not in text  # formgrader shows the autograded copy: hidden tests already removed
        status, body = _request(f"{base}/formgrader/api/grades?submission_id={submission['id']}", token)
        grade = next(g for g in json.loads(body) if g["name"] == "q_why")
        status, body = _request(f"{base}/formgrader/api/grade/{grade['id']}", token, "PUT",
                                {"manual_score": 1, "extra_credit": None})
        assert status == 200 and json.loads(body)["manual_score"] == 1
    finally:
        server.terminate()
        server.wait(timeout=30)

    run = subprocess.run([sys.executable, "-m", "autograder", "grades", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert (rows["alice"]["manual_score"], rows["alice"]["total"], rows["alice"]["total_max"]) == ("1", "3", "3")
    assert rows["bob"]["manual_score"] == "" and rows["bob"]["total"] == "0"
    lms = {r["student"]: r for r in csv.DictReader(open(out / "lms_grades.csv"))}
    assert (lms["alice"]["points"], lms["alice"]["manual_graded"]) == ("3", "yes")
    page = (out / "feedback" / "alice" / "toy_add" / "toy_add.html").read_text()
    assert "written answers: 1 / 1; total 3 / 3" in page and "add(-5, 5)" not in _text(page)
    assert json.loads((out / "feedback" / "alice" / "toy_add" / "result.json").read_text())["manual_score"] == 1

    before = (out / "grades.csv").read_text()
    export = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=out, capture_output=True, text=True)
    assert export.returncode == 0, export.stdout + export.stderr
    assert (out / "grades.csv").read_text() == before  # nbgrader's export cannot clobber ours
    exported = {r["student_id"]: r for r in csv.DictReader(open(out / "nbgrader_grades.csv"))}
    assert float(exported["alice"]["score"]) == 3.0

    from autograder.grading.batch import autograde

    autograde(subs, out, assignments, workers=1, profile="tiny")  # a re-run never un-grades
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook("toy_add", "toy_add", "alice")
        grade = next(g for g in notebook.grades if g.name == "q_why")
        assert grade.manual_score == 1 and not grade.needs_manual_grade
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert rows["alice"]["manual_score"] == "1" and rows["alice"]["total"] == "3"


def test_plain_nbgrader_with_the_repository_config(tmp_path):
    """README: `nbgrader ... --NbGrader.config_file=autograder/nbgrader_config.py` from the root."""
    (tmp_path / "autograder").mkdir()
    shutil.copy(REPO / "autograder" / "nbgrader_config.py", tmp_path / "autograder" / "nbgrader_config.py")
    shutil.copytree(FIXTURE / "solutions", tmp_path / "solutions")
    run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "toy_add", "--force",
                          "--NbGrader.config_file=autograder/nbgrader_config.py"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    text = (tmp_path / "notebooks" / "toy_add" / "toy_add.ipynb").read_text()
    assert "raise NotImplementedError()" in text and "add(-5, 5)" not in text
