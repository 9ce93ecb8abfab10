"""``python -m autograder calibrate``: the reference recipe measured where it runs, tiers checked against it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.calibrate import suggested_tiers, tier_margins

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


@pytest.mark.slow
def test_calibrate_tiny_runs_the_reference_and_writes_the_record_and_page(tmp_path, tiny_model_dir):
    out = tmp_path / "calibration"
    run = subprocess.run([sys.executable, "-m", "autograder", "calibrate", "--out", str(out), "--profile", "tiny",
                          "--assignment", "grpo_format"], capture_output=True, text=True, timeout=900)
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
