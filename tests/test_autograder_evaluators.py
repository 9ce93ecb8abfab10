"""grpo_format's held-out adherence, measured by the grader outside the student's kernel.

A fixture assignment with grpo_format's three tier cells (they only print what the grader
measured, as the contract says) and real LoRA adapters on the tiny model: the tiers follow the
grader's measurement whatever the kernel prints or sets; one evaluator process serves the whole
batch and measures exactly what a fresh one does; unusable adapters get a line, never a crash.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

TIERS = {"test_adherence_50": 0.5, "test_adherence_70": 0.7, "test_adherence_90": 0.9}
PRINT_MEASUREMENT = (
    "measured = json.loads(os.environ.get('AUTOGRADER_MEASUREMENTS') or '{}').get('grpo_format')\n"
    "print('held-out format adherence measured by the grader:', measured)")


def _course(root: Path) -> Path:
    cells = [new_markdown_cell("# Format tiers", metadata={"nbgrader": {
                 "grade": False, "grade_id": "intro", "locked": True, "schema_version": 3, "solution": False,
                 "task": False}}),
             new_code_cell("import json, os", metadata={"nbgrader": {
                 "grade": False, "grade_id": "setup", "locked": True, "schema_version": 3, "solution": False,
                 "task": False}})]
    for grade_id in TIERS:
        cells.append(new_code_cell(PRINT_MEASUREMENT, metadata={"nbgrader": {
            "grade": True, "grade_id": grade_id, "locked": True, "points": 2, "schema_version": 3,
            "solution": False, "task": False}}))
    folder = root / "solutions" / "format_tiers"
    folder.mkdir(parents=True)
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}),
                   folder / "format_tiers.ipynb")
    from manifest_fixtures import write_manifest

    write_manifest(folder, limits={"cell_timeout_s": 60}, artifacts=["artifacts/grpo_format_adapter"],
                   uses_tiny_model=True,
                   evaluator={"name": "grpo_format", "artifact": "artifacts/grpo_format_adapter",
                              "tiers": {"tiny": TIERS, "full": TIERS}, "timeout_s": 60, "memory_mb": 12288})
    return root


def _save_adapter(folder: Path, noise: float = 0.0, **manifest):
    import torch
    from helpers import lm

    model = lm.load_policy("tiny", "Qwen/Qwen2.5-0.5B-Instruct", lora=dict(r=4, alpha=8, dropout=0.0))[0]
    if noise:
        torch.manual_seed(0)
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0.0, noise)
    path = folder / "artifacts" / "grpo_format_adapter"
    lm.save_adapter(model, path, profile="tiny", steps=0)
    if manifest:
        data = json.loads((path / "course_kit_adapter.json").read_text())
        data.update(manifest)
        (path / "course_kit_adapter.json").write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def tiers(tmp_path_factory, tiny_model_dir):
    from autograder.manifest import load_assignments
    from autograder.grading.batch import autograde

    root = _course(tmp_path_factory.mktemp("tiers"))
    assignments = load_assignments(root)
    release = assignments[0].source  # no answer cells: the release is the source
    subs = root / "subs"

    def submit(student, extra_cell=None, **adapter):
        folder = subs / student / "format_tiers"
        folder.mkdir(parents=True)
        notebook = nbformat.read(release, as_version=4)
        if extra_cell:
            notebook.cells.insert(2, new_code_cell(extra_cell))
        nbformat.write(notebook, folder / "format_tiers.ipynb")
        if adapter.pop("with_adapter", True):
            return _save_adapter(folder, **adapter)
        return None

    base = submit("base_adapter")
    noisy = submit("noisy_adapter", noise=0.5)
    submit("liar", extra_cell=(  # the kernel claims 100%: the grader does not care
        "os.environ['AUTOGRADER_MEASUREMENTS'] = json.dumps({'grpo_format': {'rate': 1.0}})\nprint('100%')"))
    submit("no_adapter", with_adapter=False)
    submit("full_profile", profile="full", base_model="Qwen/Qwen2.5-0.5B-Instruct")
    pickled = submit("pickle_weights")
    (pickled / "adapter_model.safetensors").rename(pickled / "adapter_model.bin")
    results = autograde(subs, root / "out", assignments, workers=1, profile="tiny")
    return {r.student: r for r in results}, base, noisy


def test_tiers_follow_the_graders_measurement(tiers):
    results, base, noisy = tiers
    for student in ("base_adapter", "noisy_adapter", "liar"):
        result = results[student]
        measured = result.measurements["grpo_format"]
        assert measured["error"] is None and measured["total"] == 60 and 0 <= measured["rate"] <= 1
        assert measured["rate"] == measured["hits"] / 60
        assert measured["thresholds"] == TIERS  # what the kernel was told applies (flat: every profile)
        for grade_id, threshold in TIERS.items():
            assert result.cells[grade_id][0] == (2.0 if measured["rate"] >= threshold else 0.0), (student, measured)
        assert any(f"measured by the grader: {measured['rate']:.0%}" in line for line in result.feedback)
    # the liar's kernel printed 100% and its tier cells ran without error: its score is its adapter's
    assert results["liar"].measurements == {**results["liar"].measurements}
    assert results["liar"].measurements["grpo_format"]["rate"] == results["base_adapter"].measurements["grpo_format"]["rate"]
    assert results["liar"].score == results["base_adapter"].score


def test_one_evaluator_measures_what_a_fresh_one_does(tiers):
    from autograder.evaluators.grpo_format import Evaluator

    results, base, noisy = tiers
    fresh = Evaluator("tiny").measure(noisy)
    assert fresh["rate"] == results["noisy_adapter"].measurements["grpo_format"]["rate"]
    again = Evaluator("tiny").measure(base)
    assert again["rate"] == results["base_adapter"].measurements["grpo_format"]["rate"]


def test_unusable_adapters_get_a_line_not_a_crash(tiers):
    results, *_ = tiers
    missing = results["no_adapter"]
    assert [missing.cells[g][0] for g in TIERS] == [0, 0, 0]
    assert any("could not be measured" in line for line in missing.feedback)
    wrong = results["full_profile"]
    assert wrong.status == "wrong-profile" and [wrong.cells[g][0] for g in TIERS] == [0, 0, 0]
    assert any("trained in the full profile" in line and "graded in the tiny profile" in line for line in wrong.feedback)
    pickled = results["pickle_weights"]
    assert "safetensors" in pickled.measurements["grpo_format"]["error"]
    assert [pickled.cells[g][0] for g in TIERS] == [0, 0, 0]


def test_apply_tiers_thresholds():
    from autograder.evaluators import apply_tiers
    from autograder.grading.outcome import Result

    spec = {"name": "grpo_format", "tiers": TIERS}
    for rate, earned in ((0.72, [2, 2, 0]), (0.5, [2, 0, 0]), (0.9, [2, 2, 2]), (0.49, [0, 0, 0])):
        result = Result("s", "grpo_format", cells={g: [2.0, 2.0] for g in TIERS},
                        measurements={"grpo_format": {"rate": rate, "hits": 0, "total": 60, "error": None}})
        record = {"grades": {}}
        apply_tiers(result, spec, record)
        assert [result.cells[g][0] for g in TIERS] == earned
        assert [record["grades"][f"grpo_format/{g}"]["auto_score"] for g in TIERS] == earned


def test_tiers_per_profile_and_flat():
    from autograder.evaluators import apply_tiers, tiers_for
    from autograder.grading.outcome import Result

    per_profile = {"full": TIERS, "tiny": {"test_adherence_50": 0.3, "test_adherence_70": 0.4, "test_adherence_90": 0.5}}
    assert tiers_for(per_profile, "tiny") == per_profile["tiny"] and tiers_for(per_profile, "full") == TIERS
    assert tiers_for(TIERS, "tiny") == tiers_for(TIERS, "full") == TIERS  # flat: the same in every profile
    with pytest.raises(ValueError, match="add a 'colab' entry"):
        tiers_for(per_profile, "colab")
    with pytest.raises(ValueError, match="not a mix"):
        tiers_for({"tiny": TIERS, "test_adherence_50": 0.5}, "tiny")
    with pytest.raises(ValueError, match="between 0 and 1"):
        tiers_for({"tiny": {"test_adherence_50": 50}}, "tiny")
    spec = {"name": "grpo_format", "tiers": tiers_for(per_profile, "tiny"), "profile": "tiny"}
    result = Result("s", "grpo_format", cells={g: [2.0, 2.0] for g in TIERS},
                    measurements={"grpo_format": {"rate": 0.45, "hits": 27, "total": 60, "error": None}})
    apply_tiers(result, spec, None)
    assert [result.cells[g][0] for g in TIERS] == [2, 2, 0]
    assert any("tiers of the tiny profile (thresholds 30% / 40% / 50%)" in line for line in result.feedback), result.feedback
    assert "below the 50% tier (tiny profile)" in result.cell_messages["test_adherence_90"]


def test_grpo_format_declares_tiers_for_every_profile():
    from autograder.manifest import load_assignments
    from autograder.evaluators import declared

    repo = Path(__file__).resolve().parents[1]
    (assignment,) = load_assignments(repo, ["grpo_format"])
    assert declared(assignment, "full")["tiers"] == TIERS  # the handout's tiers
    tiny = declared(assignment, "tiny")["tiers"]
    assert set(tiny) == set(TIERS) and all(tiny[g] <= TIERS[g] for g in TIERS)
