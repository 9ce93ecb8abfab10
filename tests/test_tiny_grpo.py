"""tiny_grpo: structure (the handout's cells), reference answers, the reward hack, and claims in prose.

Fast checks read the notebooks and run the reference answers on plain inputs (no model). The
slow check reads the executed reference that the session runs once (``executed_references``):
its Markdown export is under the 40,000-character limit and the numbers the model answers claim
("at least 20 points", "at most 2 %") hold for it, as the robustness test checks them for
seeds 1-3.
"""
from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import nbformat
import pytest
import torch

from helpers import lm

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "solutions" / "tiny_grpo" / "tiny_grpo.ipynb"
RELEASE = REPO / "notebooks" / "tiny_grpo" / "tiny_grpo.ipynb"
MANIFEST = json.loads((REPO / "solutions" / "tiny_grpo" / "manifest.json").read_text())
HEADER = "---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n---"


def _cells(path=SOURCE):
    return nbformat.read(path, as_version=4).cells


def _by_id(path=SOURCE):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in _cells(path) if "nbgrader" in c.metadata}


def _strip(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def _reference(prompt_style: str = "raw", tokenizer=None) -> dict:
    """The reference answers of the task, reward, advantages and loss cells, run on their own."""
    cells = _by_id()
    namespace = {"torch": torch, "random": random, "re": re, "math": math, "lm": lm,
                 "CFG": type("Cfg", (), {"prompt_style": prompt_style})(), "tokenizer": tokenizer}
    model_cell = cells["model"].source
    exec(model_cell[model_cell.index("def as_model_prompt"):], namespace)  # noqa: S102 - the scaffold's prompt wrapper
    for gid in ("dataset", "reward", "advantages", "loss"):
        exec(_strip(cells[gid].source), namespace)  # noqa: S102 - our own solution cells
    return namespace


def test_points_ids_and_rubric():
    cells = _by_id()
    auto = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
            if c.metadata["nbgrader"]["grade"] and c.cell_type == "code"}
    manual = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
              if c.metadata["nbgrader"]["grade"] and c.cell_type == "markdown"}
    assert sum(auto.values()) == 20 == MANIFEST["demo"]["expected"]["reference"]
    assert manual == {"q_task_rewards": 5, "q_grpo_implementation": 5, "q_training_pipeline": 5, "q_evaluation": 5}
    for gid in manual:  # the handout's five levels, for graders, hidden from students
        notes = cells[gid].source.split("### BEGIN SOLUTION", 1)[1]
        assert "*Grader notes.*" in notes and all(f"{level}:" in notes for level in "12345"), gid
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in cells)
    ids = [c.id for c in _cells()]
    assert len(ids) == len(set(ids))


def test_follows_the_handouts_cell_structure():
    cells = _cells()
    assert cells[0].cell_type == "raw" and cells[0].source == HEADER, "Cell 0: the Quarto YAML header"
    text = [c.source for c in cells]
    positions = [next(i for i, s in enumerate(text) if s.startswith(f"### Cell {k} ·")) for k in range(1, 9)]
    assert positions == sorted(positions), "Cells 1-8 in the handout's order"
    assert cells[positions[0]].metadata["nbgrader"]["grade_id"] == "q_task_rewards"  # Cell 1 is the student's plan
    assert cells[positions[7]].metadata["nbgrader"]["grade_id"] == "q_evaluation"  # Cell 8 is the analysis
    part2 = next(i for i, s in enumerate(text) if s.startswith("## Part 2"))
    first_graded = min(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade"))
    assert part2 < first_graded, "graded cells all sit in Part 2, inside the handout's structure"
    part1 = "\n".join(text[:part2])
    for needed in ("11", "9", "baselined", "b^*", "A = Q - V", "centered_rewards",
                   "normalized_rewards", "max_rewards", "unclipped", "clipped", "torch.no_grad()", "k3"):
        assert needed in part1, f"Part 1 misses seed 004's {needed!r}"


def test_release_has_no_answers_or_hidden_tests():
    release = RELEASE.read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "_check_grpo_step", "share = part.num_rows / rollout.num_rows",
                   "return torch.exp(log_ratio) - log_ratio - 1", 'return " ".join(sorted(found.group(1).split()))'):
        assert marker not in release, marker
    for cell in _cells():
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None


def test_reference_task_and_reward():
    ns = _reference()
    train = ns["make_prompts"](300, seed=0)
    assert len(set(train)) == 300 and train == ns["make_prompts"](300, seed=0)
    held = ns["make_prompts"](50, seed=1, exclude=train)
    assert not set(held) & set(train)
    prompt = lm.SORT_PROMPT_TEMPLATE.format(digits="3 0 2")
    assert ns["expected_answer"](prompt) == "0 2 3"
    rewards = ns["get_reward"]([prompt] * 6, [" 0 2 3", "0 2 3\n", " 3 0 2", " 0 0 0", " 0 2 3 ok", ""])
    assert rewards == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    for p, r, claimed, _ in ns["SANITY_CASES"]:
        assert ns["get_reward"]([p], [r]) == [claimed]


def test_copying_the_prompt_earns_nothing():
    """Issue 14.3: the worked example's reward cannot be gamed by copying the prompt."""
    ns = _reference()
    prompts = ns["make_prompts"](200, seed=3)
    copies = [" " + p.split(": ", 1)[1].split("\n")[0] for p in prompts]
    unsorted = [(p, c) for p, c in zip(prompts, copies) if c.split() != sorted(c.split())]
    assert len(unsorted) > 150
    assert ns["get_reward"]([p for p, _ in unsorted], [c for _, c in unsorted]) == [0.0] * len(unsorted)


def test_reference_advantages_and_loss():
    ns = _reference()
    adv = ns["group_advantages"](torch.tensor([1.0, 0.0, 1.0, 1.0]), 2)
    assert torch.allclose(adv, torch.tensor([0.7071, -0.7071, 0.0, 0.0]), atol=1e-4)
    with pytest.raises(ValueError):
        ns["group_advantages"](torch.tensor([1.0, 0.0, 1.0]), 2)
    logp = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -0.5, -9.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    ref = logp + 0.5
    loss = ns["grpo_loss"](logp, torch.tensor([1.0, -1.0]), mask, ref, beta=0.1)
    k3 = math.exp(0.5) - 0.5 - 1
    assert abs(loss.item() - ((1.5 + 0.1 * k3) + (-10.0 / 3 + 0.1 * k3)) / 2) < 1e-6


def test_chat_prompts_for_the_full_profile_round_trip():
    """The full profile wraps the task in a chat template; expected_answer still finds the digits."""

    class Template:
        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            return f"<|im_start|>user\n{messages[0]['content']}<|im_end|>\n<|im_start|>assistant\n"

    ns = _reference("chat", Template())
    prompt = ns["make_prompts"](1, seed=0)[0]
    assert prompt.startswith("<|im_start|>user\nSort the digits:") and prompt.endswith("assistant\n")
    digits = re.search(r"Sort the digits: ([\d ]+)", prompt).group(1).split()
    assert ns["expected_answer"](prompt) == " ".join(sorted(digits))


def test_variants_and_buggy_patches_apply():
    answers = {gid: c.source for gid, c in _by_id().items() if c.metadata["nbgrader"].get("solution")}
    for spec in [{"patches": MANIFEST["demo"]["buggy_patches"]}, *MANIFEST["variants"]]:
        sources = dict(answers)
        sources.update(spec.get("replace", {}))
        for patch in spec.get("patches", []):
            assert sources[patch["grade_id"]].count(patch["old"]) == 1, (spec.get("name", "buggy"), patch["old"])
            sources[patch["grade_id"]] = sources[patch["grade_id"]].replace(patch["old"], patch["new"])
    assert MANIFEST["needs_real_weights"] == ["test_eval_improvement"]


def test_model_answers_claim_what_the_robustness_test_checks():
    """Numbers in the model answers are the thresholds the robustness runs enforce."""
    analysis = _by_id()["q_evaluation"].source
    checks = MANIFEST["robustness"]["checks"]
    gain = int(re.search(r"by at least (\d+) points", analysis).group(1))
    copies = int(re.search(r"copies fell to at most (\d+) %", analysis).group(1))
    assert checks["final.exact_gain"] == [">=", gain / 100]
    assert checks["final.copy_after"] == ["<=", copies / 100]


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["tiny_grpo"])
def test_executed_reference_export_and_claims(executed_references, assignment):
    from helpers import submission

    folder = executed_references.reference_dir(assignment)
    report = submission.check_notebook(folder / f"{assignment}.ipynb")
    assert report.ok and report.characters < submission.CHARACTER_LIMIT, report.format()
    assert not report.render_problems, report.format()
    final = json.loads((folder / MANIFEST["robustness"]["metrics"]).read_text())["final"]
    print(f"\ntiny_grpo reference (seed 0): export {report.characters} characters; held-out exact "
          f"{final['exact_before']:.1%} -> {final['exact_after']:.1%}, copies {final['copy_before']:.1%} -> "
          f"{final['copy_after']:.1%}")
    for name, (op, bound) in MANIFEST["robustness"]["checks"].items():
        value = final[name.split(".", 1)[1]]
        assert value >= bound if op == ">=" else value <= bound, (name, value)
