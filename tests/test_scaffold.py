"""``python -m autograder new``: a fifth assignment from one command, touching no other file."""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from autograder.authoring.points_table import table
from autograder.authoring.scaffold import TODO_MARKER
from autograder.authoring.stamping import setup_template
from autograder.manifest import REPO_ROOT, load_assignments


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True,
                          cwd=cwd or REPO_ROOT, timeout=900)


def test_a_bad_or_taken_id_is_one_line_and_writes_nothing(tmp_path):
    for bad in ("5x", "Toy", "a-b", "x"):
        result = cli("--course-root", str(tmp_path), "new", bad)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "usable id" in result.stderr
    assert not (tmp_path / "solutions").exists()
    assert cli("--course-root", str(tmp_path), "new", "toy5").returncode == 0
    again = cli("--course-root", str(tmp_path), "new", "toy5")
    assert again.returncode == 2 and "already exists" in again.stderr


def test_the_scaffold_is_a_course_notebook_from_the_one_template(tmp_path):
    assert cli("--course-root", str(tmp_path), "new", "toy5").returncode == 0
    folder = tmp_path / "solutions" / "toy5"
    notebook = nbformat.read(folder / "toy5.ipynb", as_version=4)
    setup = [c for c in notebook.cells if c.metadata["nbgrader"]["grade_id"] == "setup"]
    assert setup and setup[0].source == setup_template()
    assert table(notebook) in notebook.cells[0].source
    assert "| TODO 1 | 2 | 1 |" in notebook.cells[0].source
    (assignment,) = load_assignments(tmp_path)
    assert assignment.order == 100 and assignment.evaluator is None and assignment.export_limit is None
    assert set(json.loads((folder / "manifest.json").read_text())) == {"order", "limits", "demo"}


def test_an_unwritten_reference_is_not_recorded_as_the_expected_answer(tmp_path):
    assert cli("--course-root", str(tmp_path), "new", "toy5").returncode == 0
    result = cli("--course-root", str(tmp_path), "generate")
    assert result.returncode == 2 and "NotImplementedError" in result.stderr and "reference answer" in result.stderr
    assert not (tmp_path / "solutions" / "toy5" / "tests" / "expected.json").exists()


@pytest.mark.slow
def test_new_then_fill_then_generate_and_demo_grade_the_reference_full(tmp_path):
    """Issue 34: the whole path a maintainer takes for a fifth assignment, in a course of its own."""
    assert cli("--course-root", str(tmp_path), "new", "toy5").returncode == 0
    folder = tmp_path / "solutions" / "toy5"
    source = (folder / "toy5.ipynb").read_text()
    (folder / "toy5.ipynb").write_text(source.replace(json.dumps(TODO_MARKER)[1:-1], "return 2 * x"))
    test = folder / "tests" / "test_todo1.py"
    test.write_text(test.read_text().replace('    observe("solve(2)", nb.solve, 2)\n',
                                             '    observe("solve(2)", nb.solve, 2)\n'
                                             '    observe("a negative float", nb.solve, -3.5)\n'))
    generated = cli("--course-root", str(tmp_path), "generate")
    assert generated.returncode == 0, generated.stderr[-2000:]
    release = nbformat.read(tmp_path / "notebooks" / "toy5" / "toy5.ipynb", as_version=4)
    assert "return 2 * x" not in nbformat.writes(release) and "hidden_test" not in nbformat.writes(release)
    demo = cli("--course-root", str(tmp_path), "demo", "--out", str(tmp_path / "out"), "--strict")
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    rows = {line.split()[1]: line.split()[2:5] for line in demo.stdout.splitlines() if line.startswith("toy5 ")}
    assert rows["reference"] == ["2", "/", "2"] and rows["blank"] == ["0", "/", "2"]


def test_generate_leaves_a_setup_cell_that_is_not_an_install_cell_alone(tmp_path):
    """Only a cell with the stamped KIT_URL and KIT_VERSION lines is the install cell the template replaces."""
    from autograder.authoring.stamping import sync_setup_cells

    assert cli("--course-root", str(tmp_path), "new", "toy5").returncode == 0
    (assignment,) = load_assignments(tmp_path)
    notebook = nbformat.read(assignment.source, as_version=4)
    setup = next(c for c in notebook.cells if c.metadata["nbgrader"]["grade_id"] == "setup")
    setup.source = setup.source.replace("# The course package", "# An edited copy of the course package")
    nbformat.write(notebook, assignment.source)
    assert sync_setup_cells([assignment], check=True) == [f"{assignment.source}: its setup cell differs from "
                                                          "autograder/authoring/templates/setup_cell.py"]
    assert sync_setup_cells([assignment], check=False) == [] and sync_setup_cells([assignment], check=True) == []
    setup.source = "import time"
    nbformat.write(notebook, assignment.source)
    assert sync_setup_cells([assignment], check=False) == []
    assert "import time" in [c.source for c in nbformat.read(assignment.source, as_version=4).cells]
