"""Every assignment end to end in the tiny profile.

The session fixtures ``executed_references`` and ``graded`` (tests/conftest.py) execute each
solution notebook top to bottom once (as a student would before submitting, so artifacts such
as adapters exist), build the demo's sample submissions (reference, blank, buggy) and
autograde them; the tests here read the results.
"""
from __future__ import annotations

import os
import re
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


@pytest.mark.parametrize("assignment", IDS)
def test_every_written_answer_shows_how_it_is_graded(assignment):
    """Issue 32: the criteria a grader uses are in the release, beside the question (or, in tiny_grpo,
    in its rubric table), with the cell's own points."""
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    rubric = next((c.source for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "rubric"), "")
    written = [(i, c.metadata.nbgrader) for i, c in enumerate(release.cells) if c.cell_type == "markdown"
               and c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")]
    assert written
    for index, meta in written:
        points = f"{meta['points']:g}"
        if rubric:  # tiny_grpo: one table grades its four write-ups, a column each
            assert f"{points} points per criterion" in rubric and rubric.count("\n| **") == int(points), meta
            continue
        assert f"*How it is graded ({points} points):*" in release.cells[index - 1].source, meta["grade_id"]


TIME_CLAIM = re.compile(r"(?:(?:\b\d+(?:\.\d+)?|\ba few|\babout (?:a|one|two|three)|\btwo|\bthree)\s*(?:to \d+ )?"
                        r"(?:minutes?|min\b|seconds?|s/step|hours?))|a second or two", re.IGNORECASE)
TIME_LABEL = re.compile(r"estimate|measured|our run|in our|cores|\bCPU\b|H200|T4 measurement", re.IGNORECASE)


@pytest.mark.parametrize("assignment", IDS)
def test_every_time_the_text_quotes_is_measured_on_named_hardware_or_an_estimate(assignment):
    """Issue 32/33: a time in prose (a paragraph, a list item, a table row) says where it was measured or that it
    is an estimate."""
    source = nbformat.read(REPO_ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    unlabelled = []
    for cell in source.cells:
        if cell.cell_type == "markdown":
            for part in re.split(r"\n\s*\n|\n(?=\s*[*-] )|\n(?=\|)", cell.source):
                if TIME_CLAIM.search(part) and not TIME_LABEL.search(part):
                    unlabelled.append(" ".join(part.split())[:160])
    assert not unlabelled, unlabelled
