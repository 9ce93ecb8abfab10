"""Points have one home, ``POINTS`` in each hidden test; ``generate --check`` fails on any copy that disagrees."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.authoring import points_table
from autograder.manifest import REPO_ROOT, ManifestError, load_assignments

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "course"


def _course(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course, ignore=shutil.ignore_patterns("__pycache__"))
    return course


def _check(course):
    return subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(course), "generate", "--check"],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("assignment", load_assignments(), ids=lambda a: a.id)
def test_each_kit_notebook_carries_its_tests_points(assignment):
    notebook = nbformat.read(assignment.source, as_version=4)
    assert points_table.sync(notebook, assignment.tests_dir) == []
    assert points_table.heading_problems(notebook) == []
    assert points_table.table(notebook) in "".join(c.source for c in notebook.cells)
    assert assignment.demo.expected["reference"] == sum(
        c.metadata["nbgrader"].get("points", 0) for c in notebook.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade"))


def test_check_fails_when_points_change_in_the_test_and_generate_copies_them(tmp_path):
    course = _course(tmp_path)
    test = course / "solutions" / "toy_add" / "tests" / "test_add.py"
    test.write_text(test.read_text().replace("POINTS = 2", "POINTS = 3"))
    stale = _check(course)
    assert stale.returncode == 1 and "test_add: 2 points -> 3" in stale.stderr, stale.stderr
    fixed = subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(course), "generate"],
                           capture_output=True, text=True, timeout=600)
    assert fixed.returncode == 0, fixed.stderr
    notebook = nbformat.read(course / "notebooks" / "toy_add" / "toy_add.ipynb", as_version=4)
    assert [c.metadata["nbgrader"]["points"] for c in notebook.cells
            if c.cell_type == "code" and c.metadata["nbgrader"].get("points")] == [3]
    assert load_assignments(course)[0].demo.expected["reference"] == 3


def test_a_title_table_or_heading_that_disagrees_is_named(tmp_path):
    notebook = nbformat.read(REPO_ROOT / "solutions" / "maxent_irl" / "maxent_irl.ipynb", as_version=4)
    title = notebook.cells[0]
    title.source = title.source.replace("| **total: 40** |", "| **total: 41** |")
    assert points_table.sync(notebook, REPO_ROOT / "solutions" / "maxent_irl" / "tests") == [
        "the title's points table"]
    heading = next(c for c in notebook.cells if "### TODO 1:" in c.source)
    heading.source = heading.source.replace("(4 points)", "(5 points)")
    problems = points_table.heading_problems(notebook)
    assert len(problems) == 1 and "says 5 points; its cells carry 4" in problems[0]


def test_a_manifest_reference_that_disagrees_or_a_missing_points_is_one_line(tmp_path):
    course = _course(tmp_path)
    manifest = course / "solutions" / "toy_add" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["demo"]["expected"]["reference"] = 5
    manifest.write_text(json.dumps(data))
    with pytest.raises(ManifestError, match="POINTS add up to 2; remove it"):
        load_assignments(course)
    data["demo"]["expected"]["reference"] = 2  # agreeing is accepted
    manifest.write_text(json.dumps(data))
    assert load_assignments(course)[0].demo.expected["reference"] == 2
    test = course / "solutions" / "toy_add" / "tests" / "test_add.py"
    test.write_text(test.read_text().replace("POINTS = 2\n", ""))
    with pytest.raises(ManifestError, match="no usable POINTS"):
        load_assignments(course)
