"""Every assignment end to end in the tiny profile.

The session fixtures ``executed_references`` and ``graded`` (tests/conftest.py) execute each
solution notebook top to bottom once (as a student would before submitting, so artifacts such
as adapters exist), build the demo's sample submissions (reference, blank, buggy) and
autograde them; the tests here read the results.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.manifest import REPO_ROOT, load_assignments

ASSIGNMENTS = load_assignments(REPO_ROOT)
IDS = [a.id for a in ASSIGNMENTS]
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}

pytestmark = pytest.mark.slow


def test_releases_in_sync_with_solutions():
    result = subprocess.run([sys.executable, "-m", "autograder", "generate", "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("assignment", IDS)
def test_solution_runs_top_to_bottom(executed_references, assignment):
    assert assignment in executed_references.timings  # execute_notebook raised otherwise


@pytest.mark.parametrize("assignment", IDS)
@pytest.mark.parametrize("student", ["reference", "blank", "buggy"])
def test_sample_scores_as_expected(graded, assignment, student):
    results, _, _ = graded
    spec = next(a for a in ASSIGNMENTS if a.id == assignment)
    expected = spec.demo.expected[student]
    result = results[(student, assignment)]
    assert result.score == pytest.approx(float(expected)), (result.score, result.feedback)
    if student == "reference":
        assert result.score == result.max_score > 0 and result.status == "ok"
    if student == "blank":
        assert result.score == 0 and result.feedback


@pytest.mark.parametrize("assignment", IDS)
def test_feedback_hides_hidden_tests(graded, assignment):
    """Every hidden-test line the scrubber is meant to catch (MIN_LENGTH characters or more, and not
    also in the student's release) is absent from each sample's feedback page, and the page exists."""
    import html

    from autograder.reports.scrub import MIN_LENGTH

    _, _, out = graded
    spec = next(a for a in ASSIGNMENTS if a.id == assignment)
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    public = {line.strip() for cell in release.cells for line in cell.source.splitlines()}
    hidden_lines = []
    for cell in nbformat.read(spec.source, as_version=4).cells:
        if "### BEGIN HIDDEN TESTS" in cell.source:
            block = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]
            hidden_lines += [line.strip() for line in block.splitlines()
                             if len(line.strip()) >= MIN_LENGTH and line.strip() not in public]
    assert hidden_lines, f"{assignment} has no hidden test line to look for"
    for student in ("reference", "blank", "buggy"):
        page = out / "feedback" / student / assignment / f"{assignment}.html"
        assert page.exists(), f"no feedback page for {student}/{assignment}"
        text = html.unescape(page.read_text())
        leaked = [line for line in hidden_lines if line in text]
        assert not leaked, f"{student}/{assignment} feedback shows hidden test lines: {leaked[:2]}"


@pytest.mark.parametrize("assignment", IDS)
def test_release_runs_until_first_todo(assignment, tmp_path, tiny_model_dir):
    """Students can run everything up to their first TODO without an error."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    release = REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb"
    shutil.copytree(release.parent, tmp_path / assignment)
    notebook = nbformat.read(tmp_path / assignment / release.name, as_version=4)
    first_todo = next(i for i, c in enumerate(notebook.cells)
                      if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    notebook.cells = notebook.cells[:first_todo]
    saved = {k: os.environ.get(k) for k in TINY_ENV}
    os.environ.update(TINY_ENV)
    try:
        NotebookClient(notebook, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path / assignment)}}).execute()
    except CellExecutionError as error:
        pytest.fail(f"release of {assignment} fails before the first TODO: {str(error)[-500:]}")
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
