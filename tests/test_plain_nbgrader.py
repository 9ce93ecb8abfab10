"""Plain `nbgrader autograde` (the by-hand path, no sandbox): the hidden tests still run, judged in the
notebook's own process by the grader's comparison, and never pass what `python -m autograder` fails."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.course import fill_release
from autograder.manifest import REPO_ROOT, load_assignments

pytestmark = pytest.mark.slow


def _course(root: Path, assignment) -> Path:
    """An nbgrader course of one assignment as an instructor sets it up by hand, releases generated."""
    config = (REPO_ROOT / "autograder" / "nbgrader_by_hand.py").read_text()
    config = config.replace('str(Path(__file__).resolve().parents[1])', repr(str(root)))
    config = config.replace('"solutions"', '"source"').replace('"notebooks"', '"release"')
    (root / "nbgrader_config.py").write_text(config)
    shutil.copytree(assignment.source.parent, root / "source" / assignment.id)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment.id, "--force"], cwd=root,
                         env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return root


def test_plain_nbgrader_grades_with_the_same_hidden_tests(tmp_path):
    from nbgrader.api import Gradebook

    assignment = load_assignments(REPO_ROOT, ["maxent_irl"])[0]
    course = _course(tmp_path, assignment)
    release = course / "release" / assignment.id / f"{assignment.id}.ipynb"
    assert not (course / "release" / assignment.id / "tests").exists()  # hidden tests never released
    wrong = next(v for v in assignment.variants if v.name == "irl_flipped_gradient")
    for student, patches in (("reference", []), ("wrong", list(wrong.patches)), ("blank", None)):
        target = course / "submitted" / student / assignment.id / f"{assignment.id}.ipynb"
        target.parent.mkdir(parents=True)
        if patches is None:
            shutil.copy(release, target)
        else:
            fill_release(release, assignment.source, target, patches=[p.__dict__ for p in patches])
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "NBGRADER_EXECUTION": "autograde", "COURSE_PROFILE": "tiny"}
    run = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment.id, "--force"], cwd=course,
                         env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s.student.id: s.code_score for s in gb.assignment_submissions(assignment.id)}
        cells = {g.name: g.score for g in gb.find_submission_notebook(f"{assignment.id}", assignment.id,
                                                                      "wrong").grades if g.cell.cell_type == "code"}
    assert scores == {"reference": 28, "wrong": 18, "blank": 0}, scores
    assert [name for name, score in cells.items() if not score] == [
        "test_maxent_irl_update", "test_maxent_irl_steps", "test_maxent_irl_world"], cells
