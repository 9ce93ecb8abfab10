"""``python -m autograder new ID``: a new assignment's three files, ready to fill in.

It writes ``solutions/ID/ID.ipynb`` (a title whose points table ``generate`` keeps up to date, the
install cell from the one template, one TODO with its graded test cell, one written answer and
the packing cell), ``solutions/ID/manifest.json`` with the two fields that have no default, and
``solutions/ID/tests/test_todo1.py``, the TODO's hidden test. Nothing else in the kit names an
assignment: ``generate``, ``autograde``, the demo and the tests find it under ``solutions/``.
docs/AUTHORING.md's checklist says what to fill in, in order.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

from autograder.authoring import points_table
from autograder.authoring.stamping import SETUP_CELL, set_release_metadata, setup_template

ID_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,39}")
TODO_MARKER = 'raise NotImplementedError("your reference answer goes here")'
"""The line of the scaffold's solution that an author replaces with the reference answer."""


class ScaffoldError(ValueError):
    """The id cannot be used; the message says why and what to do."""


def _cell(kind: str, grade_id: str, source: str, points: int = 0, solution: bool = False):
    """One nbgrader cell: locked unless it is a student's answer; graded when it has points."""
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    meta = {"grade": points > 0, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    if points:
        meta["points"] = points
    return make(source, metadata={"nbgrader": meta})


def _cells(assignment_id: str) -> list:
    todo = (f"def solve(x):\n    \"\"\"TODO 1: say what it returns, with shapes and dtypes.\"\"\"\n"
            f"    ### BEGIN SOLUTION\n    {TODO_MARKER}\n    ### END SOLUTION")
    test = ("# Visible checks a student can run (add a few); the graded ones are in the hidden test.\n"
            "assert callable(solve)\n"
            "### BEGIN HIDDEN TESTS\nfrom autograder.kernel.probe import hidden_test\n"
            f'hidden_test("{assignment_id}", "test_todo1")\n### END HIDDEN TESTS')
    pack = (f"# Packs this notebook, as last saved, into {assignment_id}_submission.zip. Skipped while grading.\n"
            "from helpers import profiles, submission\n\n"
            "if profiles.is_autograding():\n    print(\"packing skipped while autograding\")\nelse:\n"
            f"    try:\n        submission.pack(\"{assignment_id}\")\n"
            "    except submission.SubmissionError as problem:\n"
            "        print(f\"could not pack the submission: {problem}\")")
    return [
        _cell("markdown", "title", f"# {assignment_id}\n\nWhat the assignment teaches, in two sentences.\n\n"),
        _cell("code", SETUP_CELL, setup_template()),
        _cell("markdown", "todo1_intro", "## TODO 1\n\nWhat `solve` must return, and what its graded checks test."),
        _cell("code", "todo1", todo, solution=True),
        _cell("code", "test_todo1", test, points=2),
        _cell("markdown", "q1", "**Q1.** A question graded by hand.\n\n### BEGIN SOLUTION\n"
              "The model answer formgrader shows the grader.\n### END SOLUTION", points=1, solution=True),
        _cell("code", "pack", pack),
    ]


HIDDEN_TEST = '''"""TODO 1: what the graded check tests, in one line."""
TODO = "TODO 1"
POINTS = 2  # the one place this cell's points are written: `generate` copies them into the notebook


def probe(nb, observe):
    # Call the student's function on inputs built here (never from the reference); `generate`
    # records what the solution returns for each label, and the grader compares the student's.
    observe("solve(2)", nb.solve, 2)


HINTS = {"solve(2)": "what the student should check when this label fails"}
'''

MANIFEST = {
    "order": 100,
    "limits": {"cell_timeout_s": 60, "notebook_timeout_s": 600, "memory_mb": 3072, "disk_mb": 256,
               "max_submission_mb": 64},
    "demo": {"buggy_description": "", "buggy_patches": [], "expected": {"blank": 0}},
}
"""The fields without a default (``autograder/manifest.py`` documents every other one)."""


def scaffold(root: Path, assignment_id: str) -> list[Path]:
    """Write the new assignment's files under ``root/solutions/assignment_id``; return their paths."""
    if not ID_PATTERN.fullmatch(assignment_id):
        raise ScaffoldError(f"{assignment_id!r} is not a usable id: use 2-40 lowercase letters, digits and _, "
                            "starting with a letter (it names the folder, the notebook and the zip)")
    folder = Path(root) / "solutions" / assignment_id
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; pick another id or delete that folder first")
    notebook = nbformat.v4.new_notebook(cells=_cells(assignment_id))
    set_release_metadata(notebook)
    notebook.cells[0].source += points_table.table(notebook)
    (folder / "tests").mkdir(parents=True)
    paths = [folder / f"{assignment_id}.ipynb", folder / "manifest.json", folder / "tests" / "test_todo1.py"]
    nbformat.write(notebook, paths[0])
    paths[1].write_text(json.dumps(MANIFEST, indent=1) + "\n", encoding="utf-8")
    paths[2].write_text(HIDDEN_TEST, encoding="utf-8")
    return paths
