"""The real grpo_format notebook under hostile adapters: one evaluator (one worker) grades
adapters built to change its shared base model, then the executed reference, which must keep
full marks. The attacks themselves are tests/test_autograder_evaluators.py's HOSTILE, applied
to copies of the reference's own adapter."""
from __future__ import annotations

import shutil

import pytest
from test_autograder_evaluators import HOSTILE

pytestmark = pytest.mark.slow

ATTACKS = ("init_from_base", "fails_halfway")
"""The two that reach peft (the adapter rules refuse the others before loading, see
test_autograder_evaluators.py): a config asking peft to rewrite base weights at load time, and
a file that fails halfway through attaching itself."""


@pytest.mark.parametrize("assignment", ["grpo_format"])
def test_the_reference_keeps_full_marks_after_hostile_adapters(executed_references, assignment, tmp_path):
    from autograder.grading.batch import Request, autograde

    spec = next(a for a in executed_references.assignments if a.id == assignment)
    reference = executed_references.reference_dir(assignment)
    subs = tmp_path / "subs"
    for number, attack in enumerate(ATTACKS):  # students sort by name: every attack is graded first
        folder = subs / f"a{number}_{attack}" / assignment
        shutil.copytree(reference, folder)
        HOSTILE[attack](folder / spec.artifacts[0])
    shutil.copytree(reference, subs / "z_reference" / assignment)
    results = {r.student: r for r in autograde(subs, tmp_path / "out", [spec], Request(workers=1, profile="tiny",
                                                                                       feedback_pages=False))}

    correct = results["z_reference"]
    assert (correct.score, correct.status) == (correct.max_score, "ok"), correct.feedback
    assert correct.max_score == spec.demo.expected["reference"]
    for number, attack in enumerate(ATTACKS):
        hostile = results[f"a{number}_{attack}"]
        assert hostile.status not in ("crashed", "error"), (attack, hostile.status, hostile.feedback)
