"""Checks of the grpo_format notebook's structure, reference answers and executed run.

The fast tests need no model; ``test_executed_reference_*`` read the session's single run of
the solution notebook (the ``executed_references`` fixture of conftest.py).
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
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
    # The handouts' 40 points: 10 conceptual, 30 implementation (24 for the TODOs' tests, 6 tiers)
    assert sum(auto.values()) == 30 and sum(manual.values()) == 10
    tiers = json.loads(MANIFEST.read_text())["evaluator"]["tiers"]["full"]
    assert sum(auto[name] for name in tiers) == 6
    from autograder.manifest import load_assignments

    expected = load_assignments(REPO, ["grpo_format"])[0].demo.expected
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
                   "_hidden_update", "(loss / cfg.grad_accum).backward()", "_tier_1", "GRADER_MEASUREMENT",
                   "spec_from_file_location", "hidden_test(", "autograder.kernel.probe"):
        assert marker not in release
    # Students get the notebook's own sections, never a reference to the source handout.
    assert "handout" not in release.lower()


def test_reference_answers():
    ns = _solution_namespace()
    loss = ns["grpo_sequence_loss"](torch.log(torch.tensor([0.6, 0.4, 0.7, 0.3])),
                                    torch.log(torch.tensor([0.5, 0.5, 0.6, 0.4])),
                                    torch.tensor([1.2, -0.4, 0.5, -1.0]), beta=0.1, epsilon=0.2)
    assert abs(loss.item() - HANDOUT_LOSS) < 1e-6
    adv = ns["compute_group_advantages"](torch.tensor([1.0, 1.0, 0.0, 1.0]), 2)
    assert adv.tolist() == [0.0, 0.0, -1.0, 1.0]
    ok = "<think>\nx\n</think>\n<answer>\n1\n</answer>"
    nested = "<think>\n<think>\nx\n</think>\n</think>\n<answer>\n1\n</answer>"
    assert ns["format_reward"]([ok, ok + "\nDone.", nested]).tolist() == [1.0, 0.0, 0.0]


def test_log_ratio_bound_changes_nothing_inside_and_keeps_the_correction_outside():
    """The reference bounds the log-ratio before exp(): identical to the handout's formula while
    |log rho| <= LOG_RATIO_BOUND (every test input stays within 1); beyond it the value is capped
    but the gradient still corrects (issue 32: a plain clamp gave 0 at log-ratio 7 with A = -1)."""
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
    # far more likely despite A < 0: pushed down; far less likely with A > 0: pulled up (KL and surrogate)
    assert 0 < new.grad[0].item() <= math.exp(bound) and -math.exp(bound) <= new.grad[1].item() < 0, new.grad
    seven = torch.tensor([7.0], dtype=torch.float64, requires_grad=True)
    ours(seven, torch.zeros(1, dtype=torch.float64), torch.tensor([-1.0], dtype=torch.float64),
         beta=0.0, epsilon=0.2).backward()
    assert seven.grad.item() == pytest.approx(math.exp(bound))   # the correction, its weight capped at e^bound


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
    from autograder.evaluators.grpo_format import PHRASINGS  # what the grader (and the tier cells) ask

    grader = set(PHRASINGS)
    assert len(grader) == 6 and len(held_out) >= 4
    assert not train & held_out and not train & grader and not held_out & grader


def _assignment():
    from autograder.manifest import REPO_ROOT, load_assignments

    (assignment,) = load_assignments(REPO_ROOT, ["grpo_format"])
    return assignment


def test_buggy_and_variant_patches_apply_once():
    manifest = json.loads(MANIFEST.read_text())
    cells = _cells(SOURCE)
    for patch in manifest["demo"]["buggy_patches"]:
        assert cells[patch["grade_id"]].source.count(patch["old"]) == 1, patch
    variants = _assignment().variants
    assert variants, "the calibration variants are files in solutions/grpo_format/variants/"
    for variant in variants:
        sources = {gid: cell.source for gid, cell in cells.items()} | dict(variant.replace)
        for patch in variant.patches:
            assert sources[patch.grade_id].count(patch.old) == 1, (variant.name, patch)


def test_every_tensor_todo_has_a_float32_variant():
    """Rule of the kit: a correct implementation that computes in float32 keeps full points."""
    allowed = {v.name for v in _assignment().variants if v.kind == "allowed"}
    for prefix in ("adv", "loss", "update"):
        assert any(name.startswith(f"{prefix}_float32") for name in allowed), prefix


def test_expected_values_are_current():
    """tests/expected.json was recorded from the current solution, hidden tests and helpers."""
    from autograder.authoring import expected

    assert expected.stale(_assignment()) is None, "run python -m autograder generate grpo_format"


# --- what the release tells students ------------------------------------------------------

REGEX_PIECES = ("(?:", "(?!", "[\\s\\S]", "\\Z", "re.compile", "fullmatch(")


def _hidden(source: str) -> str:
    return source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]


def _visible(source: str) -> str:
    return source.split("### BEGIN HIDDEN TESTS", 1)[0]


def test_todo1_describes_the_template_without_handing_over_the_regex():
    release = _cells(RELEASE)
    shown = release["todo1_intro"].source + _visible(release["test_format_reward"].source)
    assert not [piece for piece in REGEX_PIECES if piece in shown]
    for piece in ("str.strip()", "`<think>` and a newline", "a newline and the tag `</answer>`", "float32"):
        assert piece in release["todo1_intro"].source, piece


def test_visible_update_check_does_not_show_the_reference_computation():
    """TODO 4's visible checks compare the student's own step with itself (1 vs 4 micro-batches)
    and record what it passes to the loss; they never score a rollout themselves."""
    visible = _visible(_cells(RELEASE)["test_grpo_update"].source) + _cells(RELEASE)["test_grpo_update_metrics"].source
    for computation in ("token_logprobs(", ".completion_mask", "compute_group_advantages(", "adapter_disabled(",
                        ".backward("):
        assert computation not in visible, computation


def test_each_todo_states_its_points_and_each_test_cell_has_them():
    """Every autograded test cell's points appear in the TODO text that describes them."""
    cells = _cells(SOURCE)
    points = {gid: c.metadata["nbgrader"]["points"] for gid, c in cells.items()
              if c.metadata["nbgrader"]["grade"] and c.cell_type == "code"}
    stated = {
        "todo1_intro": {"test_format_reward": "4 for the scores", "test_format_reward_output": "1 for the type"},
        "todo2_intro": {"test_group_advantages": "Values (3 points)",
                        "test_group_advantages_input": "Input checks (2 points)"},
        "todo3_intro": {"test_grpo_loss_values": "4 for the value", "test_grpo_loss_gradients": "4 for the gradient"},
        "todo4_intro": {"test_grpo_update": "The update, 4 points",
                        "test_grpo_update_metrics": "The logged numbers, 2 points"},
    }
    for intro, tests in stated.items():
        text = " ".join(cells[intro].source.split())
        total = sum(points[gid] for gid in tests)
        assert f"({total} points)" in text.splitlines()[0] or f"({total} points)" in cells[intro].source.splitlines()[0]
        for gid, phrase in tests.items():
            assert phrase in text, (intro, phrase)
            assert str(points[gid]) in phrase
    title = " ".join(cells["title"].source.split())  # the table is generated from POINTS (tests/test_points_home.py)
    for row in ("TODO 1: the format reward | 5 |", "TODO 2: group-relative advantages | 5 |",
                "TODO 3: the GRPO loss | 8 |", "TODO 4: one GRPO update | 6 |", "**total: 40** | **30** | **10**"):
        assert row in title, row


def test_model_answer_numbers_follow_from_the_reference():
    """Every number in the written model answers is computed again here: Question 2's from the
    reference compute_group_advantages, Question 1's (G-1)/G factor, Question 5's weights."""
    cells = _cells(SOURCE)
    number = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")

    def numbers(text):
        # \frac{14}{9}, \tfrac43 and \frac1G are numbers (or symbols) too; other LaTeX commands are not
        text = re.sub(r"\\t?frac\{?(\d+)\}?\{?(\d+)\}?", lambda m: f" {int(m.group(1)) / int(m.group(2))!r} ", text)
        text = re.sub(r"\\[a-zA-Z]+", " ", text)
        return [float(v) for v in number.findall(text)]

    # Question 2: rewards (2, 1, -1)
    ns = _solution_namespace()
    rewards = torch.tensor([2.0, 1.0, -1.0], dtype=torch.float64)
    population = ns["compute_group_advantages"](rewards, 3).tolist()
    mean = rewards.mean().item()
    sample_std = rewards.std(unbiased=True).item()
    allowed = {2.0, 1.0, -1.0, 3.0, mean, round(mean, 3), 4 / 3, 1 / 3, 5 / 3, -5 / 3, 14 / 9, 14.0}
    allowed |= {(v - mean) ** 2 for v in rewards.tolist()}   # the squared deviations 16/9, 1/9, 25/9
    allowed |= {round(v - mean, 3) for v in rewards.tolist()} | {round(v, 3) for v in population}
    allowed |= {round(rewards.std(unbiased=False).item(), 3), round(sample_std, 3)}
    allowed |= {round((v - mean) / sample_std, 3) for v in rewards.tolist()}
    q2 = numbers(cells["q2"].source)
    assert q2, "Question 2's model answer quotes numbers"
    for value in q2:
        assert any(abs(value - a) < 6e-4 for a in allowed), f"Question 2's model answer: {value} is not derived"
    text = cells["q2"].source
    for v in population:   # the normalised advantages, to three decimals
        assert f"{v:.3f}" in text
    assert f"{sample_std:.3f}" in text and f"{rewards.std(unbiased=False).item():.3f}" in text
    # Question 1 and the background: the group-mean baseline scales the gradient by (G-1)/G, not "unbiased"
    for gid in ("q1", "background"):
        source = cells[gid].source
        assert "(G-1)/G" in source and "one half" in source, gid
        assert "keeps the policy\ngradient unbiased" not in source
        assert "leaves the expected gradient unchanged and" not in source
    # Question 5: the proposed weights keep the format terms well below the correctness bonus
    q5 = numbers(cells["q5"].source.split("*Rubric")[0])   # the rubric's numbers are points
    weights = [v for v in q5 if v not in (2.0,)]
    assert q5.count(2.0) == 1 and sum(weights) < 2.0 / 4, q5


def _bench_log() -> str:
    return (REPO / "bench" / "results" / "2026-11-26-h200" / "bench_grpo_format.log").read_text()


def test_runtime_estimate_is_derived_from_the_h200_measurement():
    """Every number of the T4 estimate is a measured value (in the bench log), a stated hardware
    figure, the full configuration, or follows from those by the arithmetic the text shows."""
    log = _bench_log()
    steady = float(re.search(r"notebook: ([0-9.]+) s per step", log).group(1))
    first = float(re.search(r"notebook step 0 \(warm-up\): ([0-9.]+) s", log).group(1))
    trl = float(re.search(r"TRL:\s+([0-9.]+) s per step", log).group(1))
    ratio = float(re.search(r"throughput ratio notebook / TRL = ([0-9.]+)", log).group(1))
    assert (steady, first, trl, ratio) == (2.10, 26.70, 6.78, 3.23)
    hardware = {4.8, 320.0, 790.0, 65.0, 15.0, 12.0}   # TB/s, GB/s, TFLOP/s, TFLOP/s, factors
    assert 4800 / 320 == 15 and round(790 / 65) == 12
    config = {32.0, 2.0, 64.0, 128.0, 8.0, 25.0, 5.0}   # the full configuration; 5 other jobs on the GPU
    low, high = 12 * steady, 15 * steady
    compile_min = (first - steady) / 60
    derived = {round(low, 1), round(high, 1), round(25 * low / 60, 1), round(25 * high / 60, 1),
               round(first - steady, 1), round(compile_min, 1), round(2 * compile_min, 1), 1.0,
               round(25 * low / 60 + compile_min + 1), round(25 * high / 60 + 2 * compile_min + 1)}
    allowed = {steady, first, trl, ratio} | hardware | config | derived
    cells = _cells(SOURCE)
    paragraph = (REPO / "docs" / "RUNTIMES.md").read_text().split("## grpo_format, `full` profile", 1)[1]
    paragraph = paragraph.split("\n## ", 1)[0]
    text = re.sub(r"\d{4}-\d{2}-\d{2}", " ", paragraph)                 # the date
    text = re.sub(r"[A-Za-z_`]+[\w.\-]*\d[\w.\-`]*", " ", text)        # H200, T4, Qwen2.5-0.5B, bench_*.py
    found = [float(v) for v in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text)]
    assert len(found) > 25
    for value in found:
        assert any(abs(value - a) < 1e-9 for a in allowed), f"T4 estimate: {value} is not measured or derived"
    estimate = "roughly 12 to 15 minutes on a T4"
    assert estimate in " ".join(paragraph.split()) and estimate in " ".join(cells["title"].source.split())
    assert round(25 * low / 60 + compile_min + 1) == 12 and round(25 * high / 60 + 2 * compile_min + 1) == 15
    assert "not a measurement" in paragraph and "not a T4 measurement" in cells["title"].source
    student = cells["train_loop_intro"].source  # the notebook states the estimate and points to its derivation
    assert estimate.replace("roughly", "Roughly").replace(" on a T4", "") in " ".join(student.split())
    assert "not a measurement" in student and "docs/RUNTIMES.md" in student and "TFLOP" not in student


TESTS = REPO / "solutions" / "grpo_format" / "tests"


def test_update_probes_run_the_tiny_model_on_fixed_rollouts_with_stand_ins():
    """TODO 4's hidden tests load the shipped tiny model on the CPU in float32 whatever the profile (the expected
    values were recorded there, so no GPU tolerance is needed), sample nothing, and swap in stand-ins for TODOs 1 to 3;
    the visible checks stay the notebook's own, with their GPU tolerance."""
    from autograder.grading import hidden_tests

    shared = (TESTS / "_update.py").read_text()
    assert 'lm.resolve_model("tiny", MODEL_ID)' in shared
    assert "from_pretrained(name, dtype=torch.float32)" in shared and "device_map" not in shared
    assert "grpo.sample_completions, grpo.token_logprobs = self.sample_completions, self.token_logprobs" in shared
    assert ".generate(" not in shared and "do_sample=True)" not in shared
    tests = hidden_tests.load(TESTS)
    for name in ("test_grpo_update", "test_grpo_update_metrics"):
        source = tests[name].kernel_source
        assert "nb.replaced(**stand_ins(" in source and "tiny_policy(" in source, name
        assert "cuda" not in source and "0.25" not in source, name
        for answer in ("clamp_min(1e-6)", "torch.minimum(", "template.fullmatch", "unbiased=False"):
            assert answer not in source, (name, answer)   # the stand-ins are not the TODOs' answers
    cells = _cells(SOURCE)
    for gid in ("test_grpo_update", "test_grpo_update_metrics"):
        assert f'hidden_test("grpo_format", "{gid}")' in _hidden(cells[gid].source)
    visible = _visible(cells["test_grpo_update"].source) + _visible(cells["test_grpo_update_metrics"].source)
    assert "format_reward(" not in visible.split("probe_runs = ")[0], "the visible checks score no rollout themselves"
    # what the visible checks keep of the student's tensors is detached and moved to the CPU first
    assert "logp_new.detach().double().cpu()" in visible and "logp_ref.detach().double().cpu()" in visible
    assert 'tolerance = 1e-3 if next(probe_model.parameters()).device.type == "cpu" else 0.25' in visible
    text = " ".join(cells["todo4_intro"].source.split())
    for promise in ("stand-ins", "fixed rollout", "tiny model on the CPU", "precision of its dtype"):
        assert promise in text, promise


# --- the tier cells: measurements that cannot be forged -----------------------------------

def _tier_ids() -> list[str]:
    return list(json.loads(MANIFEST.read_text())["evaluator"]["tiers"]["full"])


def _adherence_test():
    from autograder.grading import hidden_tests

    return hidden_tests.load(TESTS)["test_adherence"]


def test_tier_cells_follow_the_measurement_contract():
    """Each tier cell's hidden part names the one measured test; that test is decided by the grader's measurement
    (no probe runs in the kernel), measures with a private copy of the evaluator only under plain nbgrader, reads
    its thresholds from helpers/data/grading.json, and reads nothing a student's cell could set."""
    cells = _cells(SOURCE)
    from helpers import course_settings

    for profile in ("full", "tiny"):
        declared = json.loads(MANIFEST.read_text())["evaluator"]["tiers"][profile]
        assert course_settings.tiers("grpo_format", profile) == declared
    test = _adherence_test()
    assert test.measured_by == "grpo_format" and not test.kernel_source.strip()
    source = (TESTS / "test_adherence.py").read_text()
    assert "spec_from_file_location" in source and '_private_copy("grpo_format.py")' in source
    assert '_private_copy("__init__.py").tier_verdict' in source  # the grader's one tier rule, a private copy
    assert "from autograder.evaluators" not in source and "import autograder.evaluators" not in source
    assert "os.environ" not in source and "AUTOGRADER_MEASUREMENTS" not in source and "getenv" not in source
    assert '"data" / "grading.json"' in source and "/proc/self/environ" in source
    assert not re.search(r"\b0\.\d", source), "a threshold written into the hidden test"
    for gid in _tier_ids():
        source = cells[gid].source
        hidden, visible = _hidden(source), _visible(source)
        assert f'hidden_test("grpo_format", "test_adherence", "{gid}")' in hidden, gid
        assert "GRADER_MEASUREMENT" not in source
        assert not re.search(r"\b0\.\d", source), f"{gid}: a threshold written into the cell"
        assert f"course_settings.tiers('grpo_format', PROFILE)['{gid}']" in visible
    text = " ".join(cells["title"].source.split()) + " ".join(cells["adherence_intro"].source.split())
    tiers = json.loads(MANIFEST.read_text())["evaluator"]["tiers"]
    assert " / ".join(f"{t:.0%}".replace("%", "") for t in tiers["tiny"].values()) + " %" in text
    assert [tiers["full"][n] for n in _tier_ids()] == [0.5, 0.7, 0.9], "the handouts' tiers"


def _judge_tier(gid: str, measurement):
    from autograder.grading import hidden_tests

    return hidden_tests.judge(_adherence_test(), None, None, gid, measurement=measurement)


def test_tier_verdicts_agree_with_the_graders_tier_rule():
    """The cell's verdict from the grader's measurement is apply_tiers' (the authority for the points), with its
    wording, for rates around every threshold, a failed measurement and a missing one."""
    from autograder.evaluators import apply_tiers
    from autograder.outcome import Result

    for profile in ("tiny", "full"):
        tiers = json.loads(MANIFEST.read_text())["evaluator"]["tiers"][profile]
        near = [t + step for t in tiers.values() for step in (-1e-9, 0.0, 0.01)]
        rates = sorted({0.0, 1.0, *near})
        for rate, error in [(r, None) for r in rates] + [(None, "the adapter was refused: rank 128 > 64")]:
            measured = {"rate": rate, "hits": None if rate is None else round(rate * 60), "total": 60, "error": error,
                        "profile": profile}
            result = Result("s", "grpo_format", cells={g: [2.0, 2.0] for g in tiers},
                            measurements={"grpo_format": dict(measured)})
            apply_tiers(result, {"name": "grpo_format", "tiers": tiers, "profile": profile}, None)
            for gid in tiers:
                verdict = _judge_tier(gid, {**measured, "thresholds": dict(tiers)})
                passed = result.cells[gid][0] == 2.0
                assert (verdict.score == 1.0) == passed and (not verdict.failures) == passed, (profile, rate, gid)
                if not passed:
                    assert result.cell_messages[gid] in verdict.failures[0], (verdict.failures, result.cell_messages)
    for missing in (None, {"rate": 0.9, "error": None, "profile": "tiny", "thresholds": {}}):
        verdict = _judge_tier("test_adherence_50", missing)
        assert verdict.score == 0.0 and verdict.failures, missing
    assert "was not measured" in _judge_tier("test_adherence_50", None).failures[0]


def _run_tier_cell(gid: str, folder: Path, forge: str = "") -> subprocess.CompletedProcess:
    """The whole tier cell (visible and hidden part) in an IPython shell of a fresh Python started with
    COURSE_PROFILE=tiny, as plain nbgrader would run it (no grader: the hidden part measures), after ``forge``
    (a student's cell) ran."""
    cell = _strip(_cells(SOURCE)[gid].source)
    prelude = ("import os, json\nfrom pathlib import Path\nfrom helpers import course_settings\n"
               "PROFILE = 'tiny'\nADAPTER_DIR = Path('artifacts') / 'grpo_format_adapter'\n")
    runner = ("import sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
              "shell = InteractiveShell.instance()\n"
              f"sys.exit(1 if shell.run_cell({(prelude + forge + chr(10) + cell)!r}).error_in_exec else 0)\n")
    env = {**os.environ, "COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": str(REPO)}
    env.pop("AUTOGRADER_MEASUREMENTS", None)
    return subprocess.run([sys.executable, "-c", runner], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def untrained_adapter(tmp_path_factory) -> Path:
    """A submission folder whose adapter was never trained (the tiny model's own ~18 % adherence)."""
    from helpers import lm

    folder = tmp_path_factory.mktemp("untrained")
    model, _ = lm.load_policy("tiny", "Qwen/Qwen2.5-0.5B-Instruct", lora=dict(r=16, alpha=32, dropout=0.05))
    lm.save_adapter(model, folder / "artifacts" / "grpo_format_adapter", profile="tiny", steps=0)
    return folder


FORGERY = """
# what a student's cell might do to earn the tiers without training
os.environ["AUTOGRADER_MEASUREMENTS"] = json.dumps({"grpo_format": {"rate": 1.0, "hits": 60, "total": 60,
                                                                    "error": None, "profile": "tiny"}})
Path("forged-job.json").write_text(json.dumps({"state": ".", "summary": "job.json", "measurement": {
    "rate": 1.0, "error": None, "profile": "tiny"}}))
os.environ["AUTOGRADER_JOB"] = "forged-job.json"  # the grader's job settings, forged
os.environ["COURSE_PROFILE"] = "full"
GRADER_MEASUREMENT = measured = {"rate": 1.0, "error": None, "profile": "tiny"}
import autograder.evaluators.grpo_format as _evaluator
_evaluator.Evaluator.measure = lambda self, adapter: {"rate": 1.0, "hits": 60, "error": None, "profile": "tiny"}
"""


@pytest.mark.slow
def test_tier_cells_cannot_be_forged_under_plain_nbgrader(untrained_adapter):
    """Without a grader the hidden part measures the submitted (untrained) adapter itself, whatever the student's
    cells put in the environment, the namespace or the imported evaluator module."""
    for gid in _tier_ids():
        result = _run_tier_cell(gid, untrained_adapter, forge=FORGERY)
        assert result.returncode != 0, (gid, result.stdout)
        assert "is below the 30% tier (tiny profile)" in result.stdout or "tier (tiny profile)" in result.stdout, \
            result.stdout[-2000:]
        assert "held-out format adherence: 18%" in result.stdout, result.stdout


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

    # Every number the prose quotes from the run is what this run printed, and it says what the
    # prose says it does: the reward climbs, zero_std_groups falls while the reward is below 1/2.
    intro = " ".join(_cells(SOURCE)["train_loop_intro"].source.split())
    quoted = re.findall(r"`((?:reward_mean|zero_std_groups|kl) by quarter of the run: [0-9. >-]+?)`", intro)
    assert [q.split()[0] for q in quoted] == ["reward_mean", "zero_std_groups", "kl"], quoted
    for line in quoted:
        assert line in printed, f"the prose quotes {line!r}, the run printed something else"
    heldout = re.search(r"`(baseline \d+% -> after GRPO \d+%)`", intro)
    assert heldout and heldout.group(1) in printed
    assert f"baseline {final['baseline_format']:.0%} -> after GRPO {final['heldout_format']:.0%}" == heldout.group(1)
    numbers = {q.split()[0]: [float(v) for v in q.split(":")[1].split("->")] for q in quoted}
    quarters = [history[i * len(history) // 4:(i + 1) * len(history) // 4] for i in range(4)]
    for key, values in numbers.items():
        assert values == [round(mean(rows, key), 2) for rows in quarters], key
    reward, zero_std = numbers["reward_mean"], numbers["zero_std_groups"]
    assert reward[-1] > reward[0] and numbers["kl"][-1] > numbers["kl"][0]
    assert reward[0] < 0.5 and zero_std[0] > min(zero_std), "zero_std_groups falls while the reward climbs toward 1/2"
    assert f"G = {_config_module().CONFIGS['tiny'].group_size}" in intro
