"""Hostile and broken submissions, one per kind the grader must survive, graded in one batch.

Built by the tests from the toy fixture course and from a small "guarded" assignment written
here (np.allclose / np.testing / torch.allclose checks, a submitted adapter folder). Every
submission must get the expected score, status and a feedback line saying why; the batch
exits normally and OUT/gradebook.db stays readable (and is updated, not duplicated, on re-run).
"""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

FIXTURE = Path(__file__).parent / "fixtures" / "course"
MEMORY_MB = 1536


def _meta(grade_id, *, solution=False, grade=False, points=None, locked=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": (not solution) if locked is None else locked,
            "schema_version": 3, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


GUARDED_CELLS = [
    ("md", "intro", "# Guarded\nComparisons a student could patch, and a submitted adapter.", {}),
    ("code", "imports", "import json\nimport pathlib\nimport numpy as np", {}),
    ("code", "double", 'def double(x):\n    """2 x, as float64."""\n    ### BEGIN SOLUTION\n'
                       "    return 2.0 * np.asarray(x, dtype=float)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_double", 'assert np.allclose(double([1, 2]), [2, 4]), "double: small list"\n'
                            "### BEGIN HIDDEN TESTS\n"
                            'assert np.allclose(double(np.arange(4)), [0, 2, 4, 6]), "double: arange"\n'
                            "np.testing.assert_allclose(double([0.5]), [1.0], err_msg='double: halves')\n"
                            "### END HIDDEN TESTS", {"grade": True, "points": 2}),
    ("code", "triple", 'def triple(x):\n    """3 x, as float64."""\n    ### BEGIN SOLUTION\n'
                       "    return 3.0 * np.asarray(x, dtype=float)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_triple", "import torch\n"
                            'assert torch.allclose(torch.as_tensor(triple([1.0, 2.0])), torch.tensor([3.0, 6.0], '
                            'dtype=torch.float64)), "triple: values"\n'
                            "### BEGIN HIDDEN TESTS\n"
                            'assert torch.allclose(torch.as_tensor(triple([-1.0])), torch.tensor([-3.0], '
                            'dtype=torch.float64)), "triple: negative values"\n'
                            "### END HIDDEN TESTS", {"grade": True, "points": 1}),
    ("code", "test_adapter", 'config = json.loads(pathlib.Path("artifacts/adapter/adapter_config.json").read_text())\n'
                             'assert config["base_model_name_or_path"] == "tiny-base", '
                             '"adapter: trained on another base model"',
     {"grade": True, "points": 1}),
]


def _build_guarded(course: Path) -> None:
    cells = []
    for kind, grade_id, source, flags in GUARDED_CELLS:
        meta = _meta(grade_id, **flags)
        cells.append(new_markdown_cell(source, metadata=meta) if kind == "md" else new_code_cell(source, metadata=meta))
    notebook = new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                                  "name": "python3"}})
    folder = course / "solutions" / "guarded"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / "guarded.ipynb")
    (folder / "samples.json").write_text(json.dumps({
        "timeout": 8, "memory_mb": MEMORY_MB, "artifacts": ["artifacts/adapter"],
        "base_models": {"tiny": "tiny-base"}, "expected": {"reference": 4, "blank": 0}}))


def _adapter(folder: Path, base="tiny-base", config_text=None):
    adapter = folder / "artifacts" / "adapter"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text(config_text or json.dumps({"base_model_name_or_path": base}))
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    (adapter / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0\0\0\0")


# student -> (assignment, expected score, expected status, a phrase the feedback must contain)
EXPECTED = {
    "ref_toy": ("toy_add", 2, "ok", None),
    "ref_guarded": ("guarded", 4, "ok", None),
    "infinite_loop": ("guarded", 2, "timeout", "8 s per-cell limit"),
    "os_exit": ("guarded", 2, "crashed", "kernel died"),
    "killed_kernel": ("guarded", 2, "crashed", "kernel died"),
    "memory_hog": ("guarded", 3, "out-of-memory", f"{MEMORY_MB} MiB memory limit"),
    "cells_mangled": ("toy_add", 2, "ok", "appears more than once"),
    "test_edited": ("toy_add", 0, "failed-tests", "test cell test_add was edited"),
    "not_json": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "not_notebook": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "patched_compare": ("guarded", 1, "failed-tests", "numpy.allclose"),
    "adapter_missing": ("guarded", 3, "failed-tests", "artifact artifacts/adapter is missing"),
    "adapter_corrupt": ("guarded", 3, "failed-tests", "adapter_config.json is corrupt"),
    "adapter_wrong_base": ("guarded", 3, "failed-tests", "trained on 'Qwen/Qwen2.5-7B'"),
    "huge_output": ("guarded", 4, "ok", None),
}


def _patch(grade_id, old, new):
    return [{"grade_id": grade_id, "old": old, "new": new}]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from autograder.assignments import load_assignments
    from autograder.course import fill_release, generate
    from autograder.grading import autograde

    root = tmp_path_factory.mktemp("hostile")
    course = root / "course"
    shutil.copytree(FIXTURE, course)
    _build_guarded(course)
    assignments = load_assignments(course)
    generate([a for a in assignments if a.id == "guarded"], course / "notebooks")
    subs = root / "subs"

    def submit(student, assignment, patches=None, adapter=True, **adapter_kw):
        folder = subs / student / assignment
        release = course / "notebooks" / assignment / f"{assignment}.ipynb"
        fill_release(release, course / "solutions" / assignment / f"{assignment}.ipynb", folder / f"{assignment}.ipynb",
                     patches=patches)
        if assignment == "guarded" and adapter:
            _adapter(folder, **adapter_kw)
        return folder / f"{assignment}.ipynb"

    triple = "return 3.0 * np.asarray(x, dtype=float)"
    submit("ref_toy", "toy_add")
    submit("ref_guarded", "guarded")
    submit("infinite_loop", "guarded", _patch("triple", triple, "while True:\n        pass"))
    submit("os_exit", "guarded", _patch("triple", triple, triple + "\nimport os\nos._exit(0)"))
    submit("killed_kernel", "guarded", _patch("triple", triple, triple + "\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    submit("memory_hog", "guarded", _patch("triple", triple, "hog = np.ones(2 ** 31)  # 16 GiB\n    " + triple))
    submit("huge_output", "guarded", _patch("double", "return 2.0", "print('x' * 3_000_000)\n    return 2.0"))
    submit("patched_compare", "guarded", [
        {"grade_id": "double", "old": "return 2.0 * np.asarray(x, dtype=float)",
         "new": "return np.asarray(x, dtype=float)  # wrong\n"
                "np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n"
                "import builtins\nbuiltins.print = lambda *a, **k: None\nprint = lambda *a, **k: None\n"
                "class AssertionError(Exception):\n    pass\nbuiltins.AssertionError = AssertionError\n"
                "def abs(x):\n    return 0"},
        {"grade_id": "triple", "old": triple, "new": "return np.asarray(x, dtype=float)  # wrong\n"
                                                     "import torch\ntorch.allclose = lambda *a, **k: True"},
    ])
    submit("adapter_missing", "guarded", adapter=False)
    submit("adapter_corrupt", "guarded", config_text="{ not json")
    submit("adapter_wrong_base", "guarded", base="Qwen/Qwen2.5-7B")

    mangled = submit("cells_mangled", "toy_add", _patch("add", "return a + b", "return a - b  # first copy, wrong"))
    notebook = nbformat.read(mangled, as_version=4)
    add_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "add")
    fixed = nbformat.from_dict(json.loads(json.dumps(add_cell)))
    fixed.id, fixed.source = "fixed-copy", fixed.source.replace("a - b  # first copy, wrong", "a + b")
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_add")
    question = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q_why")
    question.cell_type = "code"  # retyped answer cell
    question.outputs, question.execution_count = [], None
    notebook.cells = [c for c in notebook.cells if c is not test_cell]  # deleted test cell
    notebook.cells.insert(notebook.cells.index(add_cell) + 1, fixed)  # duplicated answer cell
    nbformat.write(notebook, mangled)

    edited = submit("test_edited", "toy_add", _patch("add", "return a + b", "return a - b"))
    notebook = nbformat.read(edited, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_add":
            cell.source = "pass  # no tests here"
    nbformat.write(notebook, edited)

    (subs / "not_json" / "toy_add").mkdir(parents=True)
    (subs / "not_json" / "toy_add" / "toy_add.ipynb").write_text("{ this is not json")
    (subs / "not_notebook" / "toy_add").mkdir(parents=True)
    (subs / "not_notebook" / "toy_add" / "toy_add.ipynb").write_text(json.dumps({"hello": "world"}))

    out = root / "out"
    results = autograde(subs, out, assignments, workers=2, profile="tiny")
    return {r.student: r for r in results}, out, subs, assignments, root


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_hostile_submission_gets_its_score_status_and_reason(hostile, student):
    results, out, *_ = hostile
    assignment, score, status, phrase = EXPECTED[student]
    result = results[student]
    assert result.assignment == assignment
    assert (result.score, result.status) == (score, status), result.feedback
    if phrase:
        assert any(phrase in line for line in result.feedback), result.feedback
    page = (out / "feedback" / student / assignment / f"{assignment}.html").read_text()
    assert "BEGIN HIDDEN TESTS" not in page and "double(np.arange(4))" not in page and "triple([-1.0])" not in page
    assert len(page) < 2_000_000
    gradescope = json.loads((out / "feedback" / student / assignment / "results.json").read_text())
    assert gradescope["score"] == score and {t["name"] for t in gradescope["tests"]} == set(result.cells)


def test_patched_comparisons_are_restored_and_named(hostile):
    results, *_ = hostile
    lines = " ".join(results["patched_compare"].feedback)
    for name in ("numpy.allclose", "numpy.testing.assert_allclose", "torch.allclose", "print", "abs"):
        assert name in lines, lines
    assert results["patched_compare"].cells["test_double"][0] == 0
    assert results["patched_compare"].cells["test_triple"][0] == 0


def test_earlier_points_are_kept_and_later_cells_do_not_run(hostile):
    results, *_ = hostile
    for student in ("infinite_loop", "os_exit", "killed_kernel"):
        cells = results[student].cells
        assert cells["test_double"] == [2.0, 2.0] and cells["test_adapter"][0] == 0, (student, cells)


def test_huge_output_is_truncated(hostile):
    results, out, *_ = hostile
    page = (out / "feedback" / "huge_output" / "guarded" / "guarded.html").read_text()
    assert "output truncated" in page


def test_grades_csv_and_gradebook(hostile):
    from nbgrader.api import Gradebook

    results, out, subs, assignments, root = hostile
    rows = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert set(rows) == set(EXPECTED)
    assert rows["infinite_loop"]["status"] == "timeout" and rows["infinite_loop"]["test_double"] == "2"
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        graded = {(s.student.id, s.assignment.name): s.score for a in ("toy_add", "guarded")
                  for s in gb.assignment_submissions(a)}
    assert graded[("ref_guarded", "guarded")] == 4 and graded[("ref_toy", "toy_add")] == 2
    assert graded[("patched_compare", "guarded")] == 1 and graded[("not_json", "toy_add")] == 0
    export = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=out, capture_output=True, text=True)
    assert export.returncode == 0, export.stdout + export.stderr
    assert "ref_guarded" in (out / "grades.csv").read_text()


def test_rerun_updates_the_gradebook_instead_of_duplicating(hostile, tmp_path):
    from autograder.grading import autograde
    from nbgrader.api import Gradebook

    results, out, subs, assignments, root = hostile
    again = tmp_path / "again"
    shutil.copytree(subs / "test_edited", again / "test_edited")
    fixed = again / "test_edited" / "toy_add" / "toy_add.ipynb"
    from autograder.course import fill_release

    course = root / "course"
    fill_release(course / "notebooks" / "toy_add" / "toy_add.ipynb", course / "solutions" / "toy_add" / "toy_add.ipynb", fixed)
    rerun = autograde(again, out, assignments, workers=1, profile="tiny")
    assert rerun[0].score == 2
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        subs_toy = [s for s in gb.assignment_submissions("toy_add") if s.student.id == "test_edited"]
        assert len(subs_toy) == 1 and subs_toy[0].score == 2
        assert len(gb.students) == len(EXPECTED)


def test_summary_table(hostile, capsys):
    """Not a check: prints student / score / status / first feedback line (see with -s)."""
    results, *_ = hostile
    with capsys.disabled():
        print()
        for student in sorted(EXPECTED):
            r = results[student]
            print(f"{student:20s} {r.score:g}/{r.max_score:g}  {r.status:14s} {' | '.join(r.feedback)[:400]}")
