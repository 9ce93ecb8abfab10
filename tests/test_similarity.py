"""The similarity report (python -m autograder similarity): copies rank first, starter code is no evidence."""
from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import nbformat

from autograder.authoring.course import fill_release
from autograder.manifest import REPO_ROOT, load_assignments

ASSIGNMENT = load_assignments(REPO_ROOT, ["maxent_irl"])[0]
RELEASE = REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
VARIANTS = {v.name: v for v in ASSIGNMENT.variants}
HONEST = {"dana": ["fe_loop_over_visits", "p0_handout_in_place", "svf_einsum_and_masked_mass", "irl_log_space"],
          "eve": ["fe_list_comprehension", "p0_float32", "svf_float32", "irl_gradient_inline"],
          "fay": ["fe_visit_counts_times_features", "p0_raises_when_empty", "svf_handout_loops", "irl_in_place"]}
RENAMES = {"totals": "acc", "visited": "seen", "n_trajectories": "how_many", "counts": "starts", "Za": "za_table",
           "policy": "pi_table", "p_next": "step_matrix", "omega": "weights", "grad": "direction", "step": "t"}


def _submit(out: Path, student: str, variants=(), blank=False) -> Path:
    target = out / "submitted" / student / "maxent_irl" / "maxent_irl.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    if blank:
        shutil.copy(RELEASE, target)
        return target
    chosen = [VARIANTS[name] for name in variants]
    fill_release(RELEASE, ASSIGNMENT.source, target, patches=[p.__dict__ for v in chosen for p in v.patches],
                 replace={cell: source for v in chosen for cell, source in v.replace.items()})
    return target


def test_a_renamed_copy_ranks_first_and_starter_code_is_no_evidence(tmp_path):
    from autograder.reports.similarity import REFERENCE, report

    out = tmp_path / "out"
    (out / "release" / "maxent_irl").mkdir(parents=True)
    shutil.copy(RELEASE, out / "release" / "maxent_irl" / "maxent_irl.ipynb")
    # the demo's samples: the reference, a blank copy, the buggy copy
    _submit(out, "reference")
    _submit(out, "blank", blank=True)
    _submit(out, "blank2", blank=True)
    buggy = ASSIGNMENT.demo.buggy_patches
    fill_release(RELEASE, ASSIGNMENT.source, _submit(out, "buggy"), patches=[p.__dict__ for p in buggy])
    for student, variants in HONEST.items():  # three students who wrote their own answers
        _submit(out, student, variants)
    planted = _submit(out, "fay_copy", HONEST["fay"])  # fay's answers, every local name changed
    notebook = nbformat.read(planted, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            for old, new in RENAMES.items():
                cell.source = re.sub(rf"\b{old}\b", new, cell.source)
    nbformat.write(notebook, planted)

    index = report(out, "maxent_irl", reference=ASSIGNMENT.source)
    rows = list(csv.DictReader(open(index.parent / "similarity.csv")))
    copies_of_the_solution = {REFERENCE, "reference", "buggy"}
    others = [r for r in rows if not {r["student"], r["other"]} & copies_of_the_solution]
    assert {others[0]["student"], others[0]["other"]} == {"fay", "fay_copy"}, others[:3]
    assert float(others[0]["share"]) > 0.9 > float(others[1]["share"])
    blanks = next(r for r in rows if {r["student"], r["other"]} == {"blank", "blank2"})
    assert float(blanks["share"]) == 0.0  # the starter code every student got is left out
    solution_copies = [r for r in rows if REFERENCE in (r["student"], r["other"]) and float(r["share"]) > 0.9]
    assert {r["student"] if r["other"] == REFERENCE else r["other"] for r in solution_copies} == {"reference", "buggy"}
    page = (index.parent / next(p for p in sorted(index.parent.glob("pair-*.html"))
                                if "fay_copy" in p.read_text())).read_text()
    assert "<mark>" in page and "how_many" in page and "n_trajectories" in page
    assert "fay_copy" in index.read_text()
