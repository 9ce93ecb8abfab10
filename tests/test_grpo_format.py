"""Checks of the grpo_format notebook's structure, reference answers and executed run.

The fast tests need no model; ``test_executed_reference_*`` read the session's single run of
the solution notebook (the ``executed_references`` fixture of conftest.py).
"""
from __future__ import annotations

import json
import math
import re
import types
from pathlib import Path

import nbformat
import pytest

import torch

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "solutions" / "grpo_format" / "grpo_format.ipynb"
RELEASE = REPO / "notebooks" / "grpo_format" / "grpo_format.ipynb"
MANIFEST = REPO / "solutions" / "grpo_format" / "manifest.json"
HANDOUT_LOSS = -0.2233469   # seed 000, Section 2 test of grpo_sequence_loss


def _cells(path):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nbformat.read(path, as_version=4).cells
            if "nbgrader" in c.metadata}


def _strip(source: str) -> str:
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def _log_ratio_bound() -> float:
    match = re.search(r"^LOG_RATIO_BOUND = ([0-9.]+)", _cells(SOURCE)["config"].source, re.MULTILINE)
    assert match, "the config cell defines LOG_RATIO_BOUND"
    return float(match.group(1))


def _solution_namespace(replace: dict | None = None):
    cells = _cells(SOURCE)
    namespace = {"torch": torch, "re": re, "math": math, "LOG_RATIO_BOUND": _log_ratio_bound()}
    for grade_id in ("format_reward", "group_advantages", "grpo_loss"):
        exec(_strip((replace or {}).get(grade_id, cells[grade_id].source)), namespace)
    return namespace


def _config_module():
    """The config cell run in a module (as the notebook runs it), for both profiles."""
    from helpers import profiles, runtime

    module = types.ModuleType("grpo_format_config_test")
    namespace = module.__dict__
    namespace.update(PROFILE="tiny", profiles=profiles, runtime=runtime)
    exec("import json, math, random, re, time\nfrom dataclasses import dataclass, asdict\nfrom pathlib import Path",
         namespace)
    import sys

    sys.modules[module.__name__] = module
    try:
        exec(_cells(SOURCE)["config"].source, namespace)
    finally:
        sys.modules.pop(module.__name__, None)
    return module


def test_points_and_ids():
    cells = _cells(SOURCE)
    auto = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
            if c.metadata["nbgrader"]["grade"] and c.cell_type == "code"}
    manual = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
              if c.metadata["nbgrader"]["grade"] and c.cell_type == "markdown"}
    assert sum(auto.values()) == 26 and sum(manual.values()) == 10
    expected = json.loads(MANIFEST.read_text())["demo"]["expected"]
    assert expected["reference"] == sum(auto.values()) and expected["blank"] == 0
    assert 0 < expected["buggy"] < expected["reference"]
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in cells)
    ids = [c.id for c in nbformat.read(SOURCE, as_version=4).cells]
    assert len(ids) == len(set(ids))


def test_source_has_no_outputs_and_release_has_no_answers():
    for cell in nbformat.read(SOURCE, as_version=4).cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
    release = RELEASE.read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "torch.clamp(ratio", "_heldout_adherence",
                   "_hidden_update", "(loss / cfg.grad_accum).backward()", "_tier_1"):
        assert marker not in release


def test_reference_answers():
    ns = _solution_namespace()
    loss = ns["grpo_sequence_loss"](torch.log(torch.tensor([0.6, 0.4, 0.7, 0.3])),
                                    torch.log(torch.tensor([0.5, 0.5, 0.6, 0.4])),
                                    torch.tensor([1.2, -0.4, 0.5, -1.0]), beta=0.1, epsilon=0.2)
    assert abs(loss.item() - HANDOUT_LOSS) < 1e-6
    adv = ns["compute_group_advantages"](torch.tensor([1.0, 1.0, 0.0, 1.0]), 2)
    assert adv.tolist() == [0.0, 0.0, -1.0, 1.0]
    ok = "<think>\nx\n</think>\n<answer>\n1\n</answer>"
    assert ns["format_reward"]([ok, ok + "\nDone.", "<think>\n<think>\nx\n</think>\n</think>\n<answer>\n1\n</answer>"]).tolist() == [1.0, 0.0, 0.0]


def test_log_ratio_bound_changes_nothing_inside_and_caps_outside():
    """The reference clamps the log-ratio before exp(): identical to the handout's formula while
    |log rho| <= LOG_RATIO_BOUND (every test input stays within 1), constant beyond it."""
    bound = _log_ratio_bound()
    assert bound >= 2.0, "the bound must leave every test input (|log rho| <= 1) untouched"
    handout = (
        "def grpo_sequence_loss(logp_new, logp_ref, advantages, beta, epsilon):\n"
        "    r_t = torch.exp(logp_new - logp_ref)\n"
        "    clipped_r_t = torch.clamp(r_t, 1 - epsilon, 1 + epsilon)\n"
        "    l_clip = torch.min(r_t * advantages, clipped_r_t * advantages)\n"
        "    log_ratio = logp_ref - logp_new\n"
        "    kl = torch.exp(log_ratio) - log_ratio - 1.0\n"
        "    return -(l_clip - beta * kl).mean()\n")
    ours = _solution_namespace()["grpo_sequence_loss"]
    theirs = _solution_namespace({"grpo_loss": handout})["grpo_sequence_loss"]
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        ref = -30 * torch.rand(7, generator=gen, dtype=torch.float64)
        new = (ref + (2 * torch.rand(7, generator=gen, dtype=torch.float64) - 1) * 0.999 * bound).requires_grad_(True)
        adv = torch.randn(7, generator=gen, dtype=torch.float64)
        a = ours(new, ref, adv, beta=0.05, epsilon=0.2)
        (ga,) = torch.autograd.grad(a, new)
        b = theirs(new, ref, adv, beta=0.05, epsilon=0.2)
        (gb,) = torch.autograd.grad(b, new)
        assert abs(a.item() - b.item()) < 1e-12 and torch.allclose(ga, gb, atol=1e-12, rtol=0)
    new = torch.tensor([200.0, -200.0], dtype=torch.float64, requires_grad=True)
    capped = ours(new, torch.zeros(2, dtype=torch.float64), torch.tensor([-1.0, 1.0], dtype=torch.float64),
                  beta=0.05, epsilon=0.2)
    capped.backward()
    assert math.isfinite(capped.item()) and abs(capped.item()) <= math.exp(bound) * 2
    assert new.grad.abs().max().item() == 0.0   # beyond the bound: a constant, as the clip does


def test_configs_follow_the_handout_and_validate(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_ARTIFACTS_DIR", str(tmp_path / "artifacts"))
    for variable in ("COURSE_MAX_STEPS", "COURSE_MAX_EVAL", "COURSE_SEED"):
        monkeypatch.delenv(variable, raising=False)
    module = _config_module()
    full = module.CONFIGS["full"]
    # seed 000: batch of 4 prompts x grad_accum 8, group_size 2, 25 steps, lr 2e-5, beta 0.05, epsilon 0.2, 128 tokens
    assert (full.steps, full.prompts_per_step, full.group_size, full.grad_accum) == (25, 32, 2, 8)
    assert (full.lr, full.beta, full.epsilon, full.max_new_tokens) == (2e-5, 0.05, 0.2, 128)
    assert full.prompts_per_step * full.group_size == 64
    with pytest.raises(ValueError, match="divide prompts_per_step"):
        module.GRPOConfig(steps=1, prompts_per_step=6, group_size=2, grad_accum=4, lr=1e-3, beta=0.0,
                          epsilon=0.2, max_new_tokens=8)


def test_eval_phrasings_are_unseen_in_training_and_by_the_grader():
    """The notebook's own held-out check uses phrasings that neither training nor the grader uses."""
    source = _cells(SOURCE)["data"].source
    namespace: dict = {}
    from helpers import lm

    namespace["lm"] = lm
    start = source.index("QUESTION_TEMPLATES =")
    end = source.index("print(SYSTEM_PROMPT)")
    exec(source[start:end], namespace)
    train, held_out = set(namespace["QUESTION_TEMPLATES"]), set(namespace["EVAL_TEMPLATES"])
    from autograder.evaluators.grpo_format import PHRASINGS   # what the grader (and the tier cells) ask

    grader = set(PHRASINGS)
    assert len(grader) == 6 and len(held_out) >= 4
    assert not train & held_out and not train & grader and not held_out & grader


def test_buggy_and_variant_patches_apply_once():
    manifest = json.loads(MANIFEST.read_text())
    cells = _cells(SOURCE)
    for patch in manifest["demo"]["buggy_patches"] + [p for v in manifest["variants"] for p in v["patches"]]:
        assert cells[patch["grade_id"]].source.count(patch["old"]) == 1, patch


# --- the executed reference (slow: one run of the solution per session) -------------------

def test_tier_cells_and_the_grader_agree_on_the_tiers():
    """Each tier cell's thresholds (both profiles) are the ones the grader's evaluator scores by."""
    tiers = json.loads(MANIFEST.read_text())["evaluator"]["tiers"]
    cells = _cells(SOURCE)
    for profile in ("full", "tiny"):
        for name, threshold in tiers[profile].items():
            full, tiny = tiers["full"][name], tiers["tiny"][name]
            assert "{'full': %r, 'tiny': %r}" % (full, tiny) in cells[name].source, name    # what it prints
            assert '{"full": %r, "tiny": %r}' % (full, tiny) in cells[name].source, name    # what it checks
    assert [tiers["full"][n] for n in sorted(tiers["full"])] == [0.5, 0.7, 0.9], "the handout's tiers"


# --- the executed reference (slow: one run of the solution per session) -------------------

@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["grpo_format"])
def test_executed_reference_matches_its_prose(executed_references, assignment):
    """What the notebook's text says about the run holds in the run: finite, bounded losses, the
    reward and the KL rise, and held-out adherence improves."""
    folder = executed_references.reference_dir(assignment)
    metrics = json.loads((folder / "artifacts" / "grpo_format_metrics.json").read_text())
    history, final = metrics["history"], metrics["final"]
    assert all(math.isfinite(row["loss"]) and math.isfinite(row["grad_norm"]) for row in history)
    bound = _log_ratio_bound()
    group_size_max_adv = 3.0   # |A| <= sqrt(G - 1) for G = 8 rewards in {0, 1}
    assert max(abs(row["loss"]) for row in history) <= math.exp(bound) * group_size_max_adv + 1.0
    first, last = history[: len(history) // 4], history[-(len(history) // 4):]
    mean = lambda rows, key: sum(r[key] for r in rows) / len(rows)   # noqa: E731
    assert mean(last, "reward_mean") > mean(first, "reward_mean")
    assert mean(last, "kl") > mean(first, "kl")
    assert final["heldout_format"] > final["baseline_format"]
    executed = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    assert f"after GRPO {final['heldout_format']:.0%}" in printed
    # The graded tiers themselves: test_notebooks.py grades this reference at full marks.
