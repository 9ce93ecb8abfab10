"""The CLI on a two-cell fixture assignment: generate, check, autograde, demo, bad input."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "course"


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture()
def course(tmp_path):
    target = tmp_path / "course"
    shutil.copytree(FIXTURE, target)
    return target


def test_committed_fixture_release_is_in_sync():
    result = cli("--course-root", str(FIXTURE), "generate", "--check")
    assert result.returncode == 0, result.stderr


def test_check_fails_on_hand_edited_release(course):
    release = course / "notebooks" / "toy_add" / "toy_add.ipynb"
    notebook = nbformat.read(release, as_version=4)
    notebook.cells[1].source += "\n# edited by hand"
    nbformat.write(notebook, release)
    result = cli("--course-root", str(course), "generate", "--check")
    assert result.returncode == 1
    assert "toy_add.ipynb" in result.stderr and "differs" in result.stderr


def test_generate_rewrites_release_without_answers_or_hidden_tests(course):
    shutil.rmtree(course / "notebooks")
    assert cli("--course-root", str(course), "generate").returncode == 0
    text = (course / "notebooks" / "toy_add" / "toy_add.ipynb").read_text()
    assert "raise NotImplementedError()" in text
    assert "return a + b" not in text and "add(-5, 5)" not in text and "Because it is" not in text
    assert "add(1, 2) == 3" in text  # visible tests stay


def test_a_test_cell_the_grader_cannot_judge_stops_generate(course):
    """A graded cell that calls no hidden test file would score 0 for everyone: generate says which."""
    source = course / "solutions" / "toy_add" / "toy_add.ipynb"
    notebook = nbformat.read(source, as_version=4)
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_add")
    test_cell.source = "assert add(1, 2) == 3"
    nbformat.write(notebook, source)
    result = cli("--course-root", str(course), "generate")
    assert result.returncode == 2 and "test_add: no hidden_test(" in result.stderr, result.stderr


def test_a_course_generated_again_in_one_process_reuses_the_first_result(course, tmp_path, monkeypatch):
    """new_course runs nbgrader once per distinct set of sources in a process; the same sources
    again get a byte-identical copy, and a changed source file is generated afresh."""
    import sqlite3

    from autograder.authoring import course as course_module
    from autograder.manifest import load_assignments

    assignments = load_assignments(course)
    first = course_module.new_course(assignments, where=tmp_path)
    runs = []
    real_run = subprocess.run
    monkeypatch.setattr(course_module.subprocess, "run", lambda *a, **k: runs.append(a) or real_run(*a, **k))
    again = course_module.new_course(assignments, where=tmp_path)
    assert runs == [] and again != first

    def contents(root):
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                 if p.is_file() and p.name not in ("gradebook.db", "nbgrader_config.py")}
        return files, "\n".join(sqlite3.connect(root / "gradebook.db").iterdump())
    assert contents(again) == contents(first)
    assert str(again) in (again / "nbgrader_config.py").read_text()  # its own root, not the first one's

    source = course / "solutions" / "toy_add" / "toy_add.ipynb"
    source.write_text(source.read_text().replace("add(1, 2) == 3", "add(2, 1) == 3"))
    changed = course_module.new_course(load_assignments(course), where=tmp_path)
    assert len(runs) == 1 and "add(2, 1) == 3" in (changed / "release" / "toy_add" / "toy_add.ipynb").read_text()


def _submit(root: Path, student: str, notebook_text: str | None = None, source: Path | None = None):
    folder = root / student / "toy_add"
    folder.mkdir(parents=True)
    if source is not None:
        shutil.copy(source, folder / "toy_add.ipynb")
    if notebook_text is not None:
        (folder / "toy_add.ipynb").write_text(notebook_text)
    return folder


@pytest.mark.slow
def test_autograde_scores_feedback_and_broken_files(course, tmp_path):
    from autograder.authoring.course import fill_release

    subs = tmp_path / "subs"
    release = course / "notebooks" / "toy_add" / "toy_add.ipynb"
    good = _submit(subs, "alice")
    fill_release(release, course / "solutions" / "toy_add" / "toy_add.ipynb", good / "toy_add.ipynb")
    _submit(subs, "bob", source=release)
    _submit(subs, "carol", notebook_text="{ this is not json")
    renamed = _submit(subs, "dave", source=good / "toy_add.ipynb")
    (renamed / "toy_add.ipynb").rename(renamed / "My Homework (1).ipynb")
    (subs / "erin" / "toy_add").mkdir(parents=True)

    out = tmp_path / "out"
    result = cli("--course-root", str(course), "autograde", str(subs), "--out", str(out), "--profile", "tiny")
    assert result.returncode == 0, result.stderr
    rows = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert {"student", "assignment", "score", "max_score", "status"} <= set(next(iter(rows.values())))
    assert (rows["alice"]["score"], rows["alice"]["status"]) == ("2", "ok")
    assert (rows["bob"]["score"], rows["bob"]["status"]) == ("0", "failed-tests")
    assert (rows["carol"]["score"], rows["carol"]["status"]) == ("0", "invalid")
    assert "not a valid Jupyter notebook" in rows["carol"]["feedback"]
    assert rows["dave"]["score"] == "2"  # a lone notebook under another name is still graded
    assert (rows["erin"]["status"], rows["erin"]["max_score"]) == ("missing", "2")
    for student in rows:
        page = (out / "feedback" / student / "toy_add" / "toy_add.html").read_text()
        assert "add(-5, 5)" not in page and "BEGIN HIDDEN TESTS" not in page
    result = json.loads((out / "feedback" / "alice" / "toy_add" / "result.json").read_text())
    assert result["cells"]["test_add"] == [2.0, 2.0]


def test_wrong_layout_is_one_clear_error(course, tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copy(course / "notebooks" / "toy_add" / "toy_add.ipynb", flat / "alice.ipynb")
    result = cli("--course-root", str(course), "autograde", str(flat), "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "<student>/<assignment_id>/" in lines[0]


def test_unknown_assignment_is_named(course, tmp_path):
    result = cli("--course-root", str(course), "demo", "--out", str(tmp_path / "o"), "--assignment", "nope")
    assert result.returncode != 0 and "nope" in result.stderr and "toy_add" in result.stderr


@pytest.mark.slow
def test_demo_prints_expected_table(course, tmp_path):
    result = cli("--course-root", str(course), "demo", "--out", str(tmp_path / "demo"), "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    table = result.stdout
    assert "reference" in table and "blank" in table and "buggy" in table
    rows = {row["student"]: row for row in csv.DictReader(open(tmp_path / "demo" / "grades.csv"))}
    assert [rows[s]["score"] for s in ("reference", "blank", "buggy")] == ["2", "0", "0"]


def test_a_mistyped_id_count_or_empty_download_is_one_line_and_writes_nothing(tmp_path):
    """Issue 31: `collect --assignment maxent` exited 0 and wrote maxent/ folders; autograde and release
    printed a 12-line traceback; an empty zip exited 0; --workers 0 and -2 were accepted."""
    import zipfile

    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    out = tmp_path / "out"
    for args in (["collect", str(empty), "--assignment", "maxent", "--out", str(out)],
                 ["autograde", str(tmp_path), "--out", str(out), "--assignment", "maxent"],
                 ["release", "maxent", "--out", str(out)], ["generate", "maxent"]):
        run = subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True)
        assert run.returncode == 2 and run.stderr.strip().splitlines() == [
            "error: unknown assignment(s) maxent; available: maxent_irl, grpo_format, tiny_grpo, math_grpo"], args
    for workers in ("0", "-2"):
        run = subprocess.run([sys.executable, "-m", "autograder", "autograde", str(tmp_path), "--out", str(out),
                              "--workers", workers], capture_output=True, text=True)
        assert run.returncode == 2 and f"argument --workers: {int(workers)} is not at least 1" in run.stderr
    run = subprocess.run([sys.executable, "-m", "autograder", "collect", str(empty), "--assignment", "maxent_irl",
                          "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 1 and "no submission found" in run.stderr
    assert not out.exists()


def test_autograde_options_are_the_requests_fields():
    """Issue 43: `autograde`'s options, defaults and help come from outcome.Request (one home, as TRL's config)."""
    import argparse
    from dataclasses import fields

    from autograder.outcome import Request

    parser = argparse.ArgumentParser()
    Request.add_arguments(parser)
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    flagged = {f.name: f for f in fields(Request) if f.metadata.get("flag")}
    assert set(actions) == set(flagged) and "feedback_pages" not in actions
    for name, item in flagged.items():
        assert actions[name].help == item.metadata["help"] and item.metadata["flag"] in actions[name].option_strings
    args = parser.parse_args(["--workers", "3", "--only", "ann", "bo", "--late-penalty", "0.2"])
    request = Request.from_args(args)
    assert (request.workers, request.only, request.late_penalty, request.profile) == (3, ("ann", "bo"), 0.2, "full")
