"""math_grpo: the handout's point structure, and written answers that quote the executed run.

The model answers of the written problems state what the reference run measured ("*In our run
(tiny profile)*: ..."). Those numbers must come from the run, so this test reads every decimal
number in such a sentence and looks for it among the numbers the executed reference printed in
the cells of the same problem (between the previous written answer and this one). A number that
no cell printed means the answer is stale: re-run the notebook and update the answer.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.manifest import REPO_ROOT

SOLUTION = REPO_ROOT / "solutions" / "math_grpo" / "math_grpo.ipynb"
WRITTEN = {"q_baseline": 4, "q_train_loop": 4, "q_learning_rate": 4, "q_baselines": 4, "q_length_norm": 4,
           "q_std_norm": 4, "q_off_policy": 4, "q_async": 4, "q_kl": 4, "q_keyword": 8}
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+")
TOLERANCE = 0.0051  # printed numbers are rounded to 2-3 decimals; the answers quote them as printed


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def test_points_follow_the_handout():
    """56 autograded points (the handout's 14 unit tests x 4) and 44 written (Problems 1, 8-15 x 4, 16 x 8)."""
    cells = nbformat.read(SOLUTION, as_version=4).cells
    tests = {_meta(c)["grade_id"]: _meta(c)["points"] for c in cells if _meta(c).get("grade") and c.cell_type == "code"}
    written = {_meta(c)["grade_id"]: _meta(c)["points"] for c in cells if _meta(c).get("grade") and c.cell_type == "markdown"}
    assert sum(tests.values()) == 56, tests
    assert written == WRITTEN
    assert sum(tests.values()) + sum(written.values()) == 100


def _quoted_numbers(text: str) -> list[str]:
    sentences = re.findall(r"\*In our run[^*]*\*:?(.*?)(?:\n\n|\*Rubric|$)", text, flags=re.S)
    return [n for s in sentences for n in NUMBER.findall(s)]


def _printed_numbers(cells) -> list[float]:
    found = []
    for cell in cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
            found += [float(n) for n in NUMBER.findall(text)]
    return found


def test_every_written_answer_quotes_the_run():
    """Each model answer has an 'In our run' sentence with numbers (the slow test checks them)."""
    cells = nbformat.read(SOLUTION, as_version=4).cells
    for cell in cells:
        gid = _meta(cell).get("grade_id")
        if gid in WRITTEN:
            assert _quoted_numbers(cell.source), f"{gid}: the model answer quotes no measured number ('*In our run ...*:')"


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["math_grpo"])
def test_model_answers_quote_the_executed_reference(executed_references, assignment):
    executed = nbformat.read(executed_references.reference_dir(assignment) / f"{assignment}.ipynb", as_version=4).cells
    answers = {_meta(c).get("grade_id"): c.source for c in nbformat.read(SOLUTION, as_version=4).cells}
    ids = [_meta(c).get("grade_id") for c in executed]
    stale = []
    start = 0
    for index, gid in enumerate(ids):
        if gid not in WRITTEN:
            continue
        printed = _printed_numbers(executed[start:index])
        for quoted in _quoted_numbers(answers[gid]):
            if not any(abs(float(quoted) - value) <= TOLERANCE for value in printed):
                stale.append(f"{gid}: {quoted}")
        start = index + 1
    assert not stale, ("numbers quoted in model answers that the executed reference did not print in the same "
                       f"problem's cells (re-run the notebook and update the answers): {stale}")
