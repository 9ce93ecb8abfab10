"""``python -m autograder calibrate``: the reference recipe measured where it runs, tiers checked against it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.calibrate import suggested_tiers, tier_margins
from autograder.manifest import REPO_ROOT

FULL = {"test_adherence_50": 0.5, "test_adherence_70": 0.7, "test_adherence_90": 0.9}


def test_a_tier_above_the_reference_is_out_of_reach_and_new_thresholds_are_suggested():
    margins = tier_margins(0.82, FULL)
    assert [m["reachable"] for m in margins.values()] == [True, True, False]
    assert margins["test_adherence_90"]["margin"] == pytest.approx(-0.08)
    # the same proportions, the top tier 5 points under the reference, in steps of 5 %
    assert suggested_tiers(0.82, FULL) == pytest.approx({"test_adherence_50": 0.40, "test_adherence_70": 0.55,
                                                         "test_adherence_90": 0.75})
    assert suggested_tiers(0.97, FULL) is None  # enough room already
    assert suggested_tiers(None, FULL) is None and tier_margins(None, FULL)["test_adherence_50"]["reachable"] is False


def test_tiers_are_suggested_between_the_base_models_rate_and_the_references():
    small = {"test_adherence_50": 0.7, "test_adherence_70": 0.8, "test_adherence_90": 0.9}
    assert suggested_tiers(1.0, small, base_rate=0.533) is None  # 5 points above the base, 5 under the reference
    margins = tier_margins(1.0, small, base_rate=0.533)
    assert margins["test_adherence_50"]["base_margin"] == pytest.approx(0.167)
    # a base model that already reaches the first tier: the lowest tier moves above it, the top one stays under
    assert suggested_tiers(1.0, small, base_rate=0.72) == pytest.approx(
        {"test_adherence_50": 0.80, "test_adherence_70": 0.85, "test_adherence_90": 0.95})
    assert suggested_tiers(0.7, small, base_rate=0.72) is None  # the reference does not beat its base: no tiers fit


@pytest.mark.slow
def test_calibrate_small_trains_the_real_model_and_measures_it_against_its_base(tmp_path):
    """One small-profile step of the grpo_format reference on SmolLM2 (about 4 minutes on 2 idle cores, up to 15
    beside the rest of the suite): the record names the model and its GGUF file, and holds the base model's rate
    beside the reference's."""
    from helpers import small_model

    out = tmp_path / "calibration"
    run = subprocess.run([sys.executable, "-m", "autograder", "calibrate", "--out", str(out), "--profile", "small",
                          "--assignment", "grpo_format"], capture_output=True, text=True, timeout=1500,
                         env={**os.environ, "COURSE_MAX_STEPS": "1", "COURSE_MAX_EVAL": "8"})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    measured = json.loads((out / "calibration.json").read_text())["assignments"]["grpo_format"]
    assert measured["error"] is None and measured["steps"] == 1 and measured["seconds_per_step"] > 0
    evaluation = measured["evaluation"]
    assert evaluation["model"] == small_model.SMALL_MODEL_ID and evaluation["gguf_sha256"] == small_model.GGUF_SHA256
    assert 0 <= evaluation["base_rate"] <= 1 and 0 <= evaluation["rate"] <= 1 and evaluation["total"] == 60
    assert "quarter of the run" in measured["printed"]["plot"]
    assert "the base model alone" in run.stdout


@pytest.mark.slow
def test_calibrate_tiny_runs_the_reference_and_writes_the_record_and_page(tmp_path, tiny_model_dir):
    out = tmp_path / "calibration"
    # three training steps are enough to time a step and to measure the adapter they leave
    run = subprocess.run([sys.executable, "-m", "autograder", "calibrate", "--out", str(out), "--profile", "tiny",
                          "--assignment", "grpo_format"], capture_output=True, text=True, timeout=900,
                         env={**os.environ, "COURSE_MAX_STEPS": "3"})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    record = json.loads((out / "calibration.json").read_text())
    measured = record["assignments"]["grpo_format"]
    assert record["profile"] == "tiny" and measured["error"] is None
    assert measured["steps"] > 0 and measured["seconds_per_step"] > 0 and measured["train_s"] <= measured["wall_s"]
    assert measured["kernel"]["peak_rss_mb"] > 100 and measured["kernel"]["torch"]
    evaluation = measured["evaluation"]
    assert 0 <= evaluation["rate"] <= 1 and evaluation["total"] > 0
    assert set(evaluation["tiers"]) == set(FULL)
    page = (out / "calibration.html").read_text()
    assert "grpo_format" in page and "s per step" in page and ("reachable" in page or "out of reach" in page)
    assert "grpo_format: " in run.stdout and "s/step" in run.stdout


# --- the release states measured times when the course has a calibration record ------------------

def _record(profile="full", error=None):
    return {"format": 1, "created": "2026-12-01T10:00:00+00:00", "profile": profile,
            "assignments": {"toy_add": {"wall_s": 840.0, "train_s": 720.0, "steps": 25, "seconds_per_step": 28.8,
                                        "kernel": {"device": "Tesla T4"}, "evaluation": None, "error": error}}}


def test_a_full_gpu_record_gives_the_measured_sentence_and_anything_else_keeps_the_estimate():
    from autograder.authoring.runtimes import measured_sentence, stamp_runtimes

    sentence = measured_sentence(_record(), "toy_add")
    assert sentence == ("measured on a Tesla T4 on 2026-12-01: 14 minutes for the whole notebook, "
                        "12 of them training (28.80 s per step)")
    for record in (_record(profile="tiny"), _record(error="OOM"), None):
        assert measured_sentence(record, "toy_add") is None
    assert measured_sentence(_record(), "other") is None
    text = "Time: <!-- runtime -->**about 5 minutes on a T4**, an estimate<!-- /runtime -->; see below."
    assert stamp_runtimes(text, None) == text
    assert stamp_runtimes(text, sentence) == f"Time: <!-- runtime -->{sentence}<!-- /runtime -->; see below."


def test_a_course_with_a_calibration_record_releases_and_grades_the_measured_time(tmp_path):
    from autograder.authoring.course import new_course
    from autograder.manifest import load_assignments

    course_root = tmp_path / "root"
    shutil.copytree(REPO_ROOT / "tests" / "fixtures" / "course", course_root)
    source = course_root / "solutions" / "toy_add" / "toy_add.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[0].source += "\n\nTime: <!-- runtime -->about 5 minutes on a T4, an estimate<!-- /runtime -->."
    nbformat.write(notebook, source)
    (course_root / "calibration").mkdir()
    (course_root / "calibration" / "calibration.json").write_text(json.dumps(_record()))
    settings = (REPO_ROOT / "course.toml").read_text()
    (course_root / "course.toml").write_text(settings + '\n[release]\ncalibration = "calibration/calibration.json"\n'
                                             if "[release]" not in settings else
                                             settings.replace("[release]", '[release]\ncalibration = '
                                                              '"calibration/calibration.json"', 1))
    course = new_course(load_assignments(course_root), where=tmp_path)
    for folder in ("source", "release"):
        title = nbformat.read(course / folder / "toy_add" / "toy_add.ipynb", as_version=4).cells[0].source
        assert "measured on a Tesla T4 on 2026-12-01: 14 minutes" in title and "an estimate" not in title

    (course_root / "calibration" / "calibration.json").write_text("{")
    with pytest.raises(Exception, match="calibration"):
        new_course(load_assignments(course_root), where=tmp_path)
