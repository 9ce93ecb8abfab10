"""No written answer is stated in what students read before they answer it (issue 42): each pattern is a
sentence that once gave a question's rubric point away in the background, a visible check's hint or another
TODO's text. The release's text is searched, the question and its answer cell left out."""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.manifest import REPO_ROOT

GIVEAWAYS = {
    "maxent_irl": {
        "Question 2 (a zero row of the policy)": [r"leaves the policy row at zero"],
        "Question 3 (the terminal-state rule)": [r"terminal state \d+ is counted when the mass arrives",
                                                 r"mass in a terminal state goes nowhere"],
        "Question 4 (the overflow chain and log space)": [r"turns the NaN policy into an all-zero one",
                                                          r"if you chose log space"],
    },
    "grpo_format": {
        "Question 1 (the group as a baseline)": [r"comparison among siblings", r"textbook baseline"],
        "Question 4 (which side the clip leaves open)": [
            r"negative\W+advantage[^.]{0,80}not\W+clipped", r"more\W+likely\W+despite\W+a\W+negative\W+advantage",
            r"with\W+a\W+negative\W+advantage\W+such\W+a\W+completion"],
    },
}


def _student_text(path) -> str:
    """The release's markdown and code, less the written questions and their answer cells."""
    kept = []
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        question = cell.cell_type == "markdown" and re.match(r"\*\*Question \d", cell.source)
        if meta.get("solution") and cell.cell_type == "markdown" or question:
            continue
        kept.append(cell.source)
    return " ".join(" ".join(kept).split())


@pytest.mark.parametrize("assignment", sorted(GIVEAWAYS))
def test_no_question_is_answered_before_it_is_asked(assignment):
    text = _student_text(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb")
    found = [f"{question}: {pattern!r}" for question, patterns in GIVEAWAYS[assignment].items()
             for pattern in patterns if re.search(pattern, text, flags=re.IGNORECASE)]
    assert not found, found


def test_the_patterns_find_what_they_were_written_for(tmp_path):
    """Each pattern matches the sentence it stands for (as the notebooks had it before the fix)."""
    old = {"leaves the policy row at zero": "the code's guard `where=Zs > 0` leaves the policy row at zero",
           "terminal state": "terminal state 2 is counted when the mass arrives and then sends nothing on",
           "goes nowhere": "mass in a terminal state goes nowhere, from step 0 on",
           "all-zero": "quietly turns the NaN policy into an all-zero one: the forward pass loses all",
           "log space": "using the technique you described in Question 4 (if you chose log space: keep",
           "siblings": "GRPO replaces it with a comparison among siblings: for each prompt",
           "textbook": "it is *almost* a textbook baseline. A baseline",
           "not clipped": "With a negative advantage that side of the surrogate is not clipped, so",
           "despite": "a completion that became far *more* likely despite a negative advantage would",
           "such a completion": "With a negative advantage such a completion is not clipped and weighs"}
    patterns = [p for questions in GIVEAWAYS.values() for ps in questions.values() for p in ps]
    for pattern in patterns:
        assert any(re.search(pattern, " ".join(s.split()), flags=re.IGNORECASE) for s in old.values()), pattern
