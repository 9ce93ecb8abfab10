"""Fast checks of the grpo_format notebook's structure and reference answers (no model needed)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat
import pytest

import torch

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "solutions" / "grpo_format" / "grpo_format.ipynb"
RELEASE = REPO / "notebooks" / "grpo_format" / "grpo_format.ipynb"
SAMPLES = REPO / "autograder" / "samples" / "grpo_format.json"


def _cells(path):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nbformat.read(path, as_version=4).cells
            if "nbgrader" in c.metadata}


def _solution_namespace():
    cells = _cells(SOURCE)
    namespace = {"torch": torch, "re": re, "math": math}
    for grade_id in ("format_reward", "group_advantages", "grpo_loss"):
        source = "\n".join(line for line in cells[grade_id].source.splitlines()
                           if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        exec(source, namespace)
    return namespace


def test_points_and_ids():
    cells = _cells(SOURCE)
    auto = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
            if c.metadata["nbgrader"]["grade"] and c.cell_type == "code"}
    manual = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
              if c.metadata["nbgrader"]["grade"] and c.cell_type == "markdown"}
    assert sum(auto.values()) == 26 and sum(manual.values()) == 10
    expected = json.loads(SAMPLES.read_text())["expected"]
    assert expected["reference"] == sum(auto.values()) and expected["blank"] == 0
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in cells)
    ids = [c.id for c in nbformat.read(SOURCE, as_version=4).cells]
    assert len(ids) == len(set(ids))


def test_source_has_no_outputs_and_release_has_no_answers():
    for cell in nbformat.read(SOURCE, as_version=4).cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
    release = RELEASE.read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "torch.clamp(ratio", "_heldout_adherence"):
        assert marker not in release


def test_reference_answers():
    ns = _solution_namespace()
    loss = ns["grpo_sequence_loss"](torch.log(torch.tensor([0.6, 0.4, 0.7, 0.3])),
                                    torch.log(torch.tensor([0.5, 0.5, 0.6, 0.4])),
                                    torch.tensor([1.2, -0.4, 0.5, -1.0]), beta=0.1, epsilon=0.2)
    assert abs(loss.item() - (-0.2233469)) < 1e-6
    adv = ns["compute_group_advantages"](torch.tensor([1.0, 1.0, 0.0, 1.0]), 2)
    assert adv.tolist() == [0.0, 0.0, -1.0, 1.0]
    ok = "<think>\nx\n</think>\n<answer>\n1\n</answer>"
    assert ns["format_reward"]([ok, ok + "\nDone.", "<think>\n<think>\nx\n</think>\n</think>\n<answer>\n1\n</answer>"]).tolist() == [1.0, 0.0, 0.0]


def test_buggy_patch_applies_once():
    sample = json.loads(SAMPLES.read_text())
    cells = _cells(SOURCE)
    for patch in sample["buggy"]["patches"]:
        assert cells[patch["grade_id"]].source.count(patch["old"]) == 1
