"""tiny_grpo: structure, the rubric students see, reference answers, hidden tests that grade any task
through the TODOs' interface, and every number the notebook quotes.

Fast checks read the notebooks, run the reference answers on plain inputs (no model), run the
model-free hidden tests (probe, then judge against ``tests/expected.json``) on other tasks and on the
calibration variants (``solutions/tiny_grpo/variants/``), and compare the task table with the bench
results it quotes. The slow checks read the executed reference that the session runs
once (``executed_references``): its Markdown export is under the 40,000-character limit, it reaches
the robustness targets, and every number in a model answer is one the run printed.
"""
from __future__ import annotations

import importlib.util
import json
import math
import random
import re
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
import torch

from autograder.grading import hidden_tests
from autograder.kernel.probe import observe_probe
from autograder.variants import load_variants
from helpers import lm, tiny_grpo_tools

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "solutions" / "tiny_grpo" / "tiny_grpo.ipynb"
RELEASE = REPO / "notebooks" / "tiny_grpo" / "tiny_grpo.ipynb"
MANIFEST = json.loads((REPO / "solutions" / "tiny_grpo" / "manifest.json").read_text())
VARIANTS = load_variants(REPO / "solutions" / "tiny_grpo" / "variants")
HIDDEN = REPO / "solutions" / "tiny_grpo" / "tests"
BENCH = REPO / "bench" / "results" / "tiny_grpo_tasks.json"
HEADER = "---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n---"
WRITTEN = {"q_task_rewards": 5, "q_grpo_implementation": 5, "q_training_pipeline": 5, "q_evaluation": 5}
TESTS = {"test_dataset": 1, "test_expected_answer": 1, "test_reward": 2, "test_sanity_table": 1, "test_advantages": 2,
         "test_advantages_edges": 1, "test_loss": 2, "test_kl": 1, "test_logprobs": 1, "test_grpo_step": 1,
         "test_grpo_step_loss": 2, "test_one_rollout": 1, "test_training": 1, "test_training_log": 1,
         "test_eval_improvement": 3}
MODEL_FREE = ("test_dataset", "test_expected_answer", "test_reward", "test_sanity_table", "test_advantages",
              "test_advantages_edges", "test_loss", "test_kl", "test_logprobs")
"""Test cells that need no model: fast enough to run here on other tasks and on every variant."""
CRITERIA = ("Task & rewards", "GRPO implementation", "Training pipeline", "Evaluation")


def _cells(path=SOURCE):
    return nbformat.read(path, as_version=4).cells


def _by_id(path=SOURCE):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in _cells(path) if "nbgrader" in c.metadata}


def _strip(source: str) -> str:
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)


def _namespace(prompt_style: str = "raw", tokenizer=None) -> dict:
    """What the answer and test cells find in the notebook, without a model."""
    import dataclasses

    namespace = {"torch": torch, "random": random, "re": re, "math": math, "lm": lm, "dataclasses": dataclasses,
                 "tools": tiny_grpo_tools, "tokenizer": tokenizer,
                 "CFG": type("Cfg", (), {"prompt_style": prompt_style, "train_size": 1000, "eval_size": 200})()}
    model_cell = _by_id()["model"].source
    exec(model_cell[model_cell.index("def as_model_prompt"):], namespace)  # noqa: S102 - the scaffold's prompt wrapper
    return namespace


def _reference(prompt_style: str = "raw", tokenizer=None, sources: dict | None = None, step: bool = False) -> dict:
    """The reference answers of the task, reward, advantages and loss cells (or ``sources``), run on their own;
    with ``step``, the grpo_step and train cells too (and the Config they name)."""
    cells = _by_id()
    namespace = _namespace(prompt_style, tokenizer)
    if step:
        from helpers import grpo

        model_cell = cells["model"].source
        config = model_cell[model_cell.index("@dataclass"):model_cell.index("\n\nCFG =")]
        namespace.update(grpo=grpo, time=time)
        exec("from dataclasses import dataclass\n" + config, namespace)  # noqa: S102 - the scaffold's Config
    for gid in ("dataset", "reward", "advantages", "loss", "logprobs") + (("grpo_step", "train") if step else ()):
        exec(_strip((sources or {}).get(gid, cells[gid].source)), namespace)  # noqa: S102 - our own solution cells
    return namespace


def _with_prompts(namespace: dict) -> dict:
    namespace["TRAIN_PROMPTS"] = namespace["make_prompts"](1000, seed=0)
    namespace["EVAL_PROMPTS"] = namespace["make_prompts"](200, seed=1, exclude=namespace["TRAIN_PROMPTS"])
    return namespace


def _passes(gid: str, namespace: dict, sources: dict | None = None) -> bool:
    """Grade a test cell as the grader does: its hidden test's probe on ``namespace``, the task functions apart
    (from the answer cells' ``sources`` in a process of their own, as the grader runs them; else the namespace's),
    then the judge against the reference's recorded observations (the visible checks teach; they never score)."""
    from autograder.grading.task_process import TaskRunner, task_source
    from autograder.kernel.probe import InProcess

    test = hidden_tests.load(HIDDEN)[hidden_tests.named_in(_by_id()[gid].source)]
    report = observe_probe(test.name, test.kernel_source, namespace)  # the functions' own globals: stand-ins reach them
    if test.task_functions:
        cells = [sources[cell] for cell in test.module.TASK_CELLS] if sources else None
        runner = TaskRunner(task_source(cells, test.task_functions)) if cells else InProcess(namespace)
        hidden_tests.observe_task(test, report, runner)
    expected = hidden_tests.read_expected(HIDDEN)["tests"].get(test.name)
    return not hidden_tests.judge(test, report, expected, gid).failures


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_tiny_grpo_tasks", REPO / "bench" / "bench_tiny_grpo_tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- structure and what students see --------------------------------------------------------------

def test_points_ids_and_rubric():
    cells = _by_id()
    auto = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
            if c.metadata["nbgrader"]["grade"] and c.cell_type == "code"}
    manual = {k: c.metadata["nbgrader"]["points"] for k, c in cells.items()
              if c.metadata["nbgrader"]["grade"] and c.cell_type == "markdown"}
    from autograder.manifest import load_assignments

    (spec,) = load_assignments(REPO, ["tiny_grpo"])
    assert auto == TESTS and sum(auto.values()) == 21 == spec.demo.expected["reference"]
    assert manual == WRITTEN
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in cells)
    ids = [c.id for c in _cells()]
    assert len(ids) == len(set(ids))


def test_the_rubric_is_in_the_release():
    """Issue 1: all five levels of the four criteria are visible to students, outside solution blocks."""
    rubric = _by_id(RELEASE)["rubric"]
    meta = rubric.metadata["nbgrader"]
    assert rubric.cell_type == "markdown" and meta["locked"] and not meta["solution"] and not meta["grade"]
    rows = {line.split("|")[1].strip(" *"): [c.strip() for c in line.split("|")[2:-1]]
            for line in rubric.source.splitlines() if re.match(r"\| \*\*[1-5]\*\* \|", line)}
    assert sorted(rows) == ["1", "2", "3", "4", "5"] and all(len(r) == 4 and all(r) for r in rows.values())
    header = next(line for line in rubric.source.splitlines() if line.startswith("| |"))
    assert all(criterion in header for criterion in CRITERIA)
    for gid in WRITTEN:  # the model answers no longer hide the levels
        assert "Grader notes" not in _by_id()[gid].source, gid


def test_follows_the_assignments_cell_structure():
    cells = _cells()
    assert cells[0].cell_type == "raw" and cells[0].source == HEADER, "Cell 0: the Quarto YAML header"
    text = [c.source for c in cells]
    positions = [next(i for i, s in enumerate(text) if s.startswith(f"### Cell {k} ·")) for k in range(1, 9)]
    assert positions == sorted(positions), "Cells 1-8 in order"
    assert cells[positions[0]].metadata["nbgrader"]["grade_id"] == "q_task_rewards"  # Cell 1 is the student's plan
    assert cells[positions[7]].metadata["nbgrader"]["grade_id"] == "q_evaluation"  # Cell 8 is the analysis
    part2 = next(i for i, s in enumerate(text) if s.startswith("## Part 2"))
    first_graded = min(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade"))
    assert part2 < first_graded, "graded cells all sit in Part 2"
    part1 = "\n".join(text[:part2])
    for needed in ("11", "9", "baselined", "b^*", "A = Q - V", "centered_rewards",
                   "normalized_rewards", "max_rewards", "unclipped", "clipped", "torch.no_grad()", "k3"):
        assert needed in part1, f"Part 1 misses seed 004's {needed!r}"


def test_release_has_no_answers_or_hidden_tests():
    release = RELEASE.read_text()
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "_check_step_loss", "stand_in_loss",
                   "share = part.num_rows / rollout.num_rows", "return torch.exp(log_ratio) - log_ratio - 1",
                   'return " ".join(sorted(found.group(1).split()))'):
        assert marker not in release, marker
    for cell in _cells():
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None


def test_what_students_get_never_mentions_the_handout():
    """Issue 6: the notebook is the assignment; students have no other handout."""
    text = "\n".join(c.source for c in _cells(RELEASE)) + (REPO / "helpers" / "tiny_grpo_tools.py").read_text()
    assert "handout" not in text.lower()


def test_every_todo_names_its_tests_points():
    """Each test cell's points are stated next to the TODO it grades (Cells 3-6 headings and paragraphs)."""
    cells = _by_id(RELEASE)
    for gid, heading in (("dataset_md", "(2 points)"), ("reward_md", "(3 points)"),
                         ("advantages_md", "(3 + 3 + 1 + 4 points)"), ("train_md", "(2 points)")):
        assert heading in cells[gid].source, gid
    step = cells["step_md"].source
    assert "One `grpo.sample_completions` call per step" in step and "1 point checks only this" in step


# --- reference answers ------------------------------------------------------------------------------

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
    unsorted = [(p, c) for p, c in zip(prompts, copies, strict=True) if c.split() != sorted(c.split())]
    assert len(unsorted) > 150
    assert ns["get_reward"]([p for p, _ in unsorted], [c for _, c in unsorted]) == [0.0] * len(unsorted)


def test_reference_advantages_and_loss():
    """The loss sums each completion's terms over its tokens (the sequence log-probability), then averages."""
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
    assert abs(loss.item() - ((3.0 + 0.1 * 2 * k3) + (-10.0 + 0.1 * 3 * k3)) / 2) < 1e-6


def test_kl_as_a_reward_penalty_moves_the_kl_into_the_advantages(monkeypatch):
    """Issue 32: kl_penalty="reward" subtracts beta times each completion's k3 sum from the rewards before the
    groups' normalisation and leaves the loss without a KL term; the returned rewards stay the task's."""
    from helpers import grpo

    monkeypatch.syspath_prepend(str(HIDDEN))
    import _world

    ns = _reference(step=True)
    tok, policy = _world.tokenizer(), _world.tiny_policy(nudge=True)
    cfg = _world.StepConfig(kl_penalty="reward", beta=0.5)
    with _world.fixed_sampling(tok, rollouts := []):
        out = ns["grpo_step"](policy, tok, list(_world.PROMPTS), cfg)
    rollout = rollouts[0]
    args = (rollout.sequences, rollout.attention_mask, rollout.prompt_width, cfg.temperature)
    with torch.no_grad():
        k3 = ns["k3_kl"](grpo.token_logprobs(policy, *args), grpo.reference_token_logprobs(policy, *args))  # [N, T]
    kl = (k3 * rollout.completion_mask).sum(1)  # [N]
    task = torch.tensor(ns["get_reward"]([p for p in _world.PROMPTS for _ in range(4)], rollout.completions))
    assert float(kl.min()) > 0 and torch.equal(out["rewards"], task)
    assert torch.allclose(out["advantages"], ns["group_advantages"](task - 0.5 * kl, 4), atol=1e-4)
    assert abs(out["kl"] - float(kl.mean())) < 1e-4
    policy.zero_grad()
    with _world.fixed_sampling(tok, []):  # the same rollout without any KL: the task's own advantages
        plain = ns["grpo_step"](policy, tok, list(_world.PROMPTS), _world.StepConfig(kl_penalty="loss", beta=0.0))
    assert plain["kl"] == 0.0 and torch.allclose(plain["advantages"], ns["group_advantages"](task, 4), atol=1e-6)
    assert not torch.allclose(plain["advantages"], out["advantages"], atol=1e-3)


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
    buggy = [(p["grade_id"], p["old"], p["new"]) for p in MANIFEST["demo"]["buggy_patches"]]
    specs = [(v.name, v.replace, [(p.grade_id, p.old, p.new) for p in v.patches]) for v in VARIANTS]
    for name, replace, patches in [("buggy", {}, buggy), *specs]:
        sources = {**answers, **replace}
        for grade_id, old, new in patches:
            assert sources[grade_id].count(old) == 1, (name, old)
            sources[grade_id] = sources[grade_id].replace(old, new)
    assert MANIFEST["needs_real_weights"] == ["test_eval_improvement"]


# --- hidden tests: any task, every variant ------------------------------------------------------------

def _sanity_rows(make_prompts, expected_answer) -> list:
    """A generic sanity table for an all-or-nothing reward on any task."""
    p, q = make_prompts(2, seed=5)
    a, b = expected_answer(p), expected_answer(q)
    return [(p, a, 1.0, "right"), (p, " " + a + "\n", 1.0, "spaces"), (p, a + " x", 0.0, "extra"),
            (p, b, 0.0, "another prompt's answer"), (p, "", 0.0, "empty"), (p, " \n", 0.0, "blank"),
            (p, p, 0.0, "echo"), (p, a.split()[0], 0.0, "truncated")]


@pytest.mark.parametrize("task", ["descending", "addition"])
def test_hidden_tests_grade_other_tasks_through_the_interface(task, tiny_tokenizer):
    """Issue 2: the dataset and reward tests grade whatever task the student chose (here two of the
    suggested ones, written as the bench writes them) through make_prompts / expected_answer / get_reward."""
    bench = _bench_module()
    make_prompts, expected_answer, _ = bench.TASKS[task](tiny_tokenizer)
    ns = _namespace(tokenizer=tiny_tokenizer)
    ns.update(make_prompts=make_prompts, expected_answer=expected_answer,
              get_reward=bench._exact_reward(expected_answer))
    ns["SANITY_CASES"] = _sanity_rows(make_prompts, expected_answer)
    _with_prompts(ns)
    cells = ("test_dataset", "test_expected_answer", "test_reward", "test_sanity_table")
    results = {gid: _passes(gid, ns) for gid in cells}
    assert all(results.values()), results
    ns["expected_answer"] = lambda prompt: "0 1 2"  # one answer for every prompt: a task that teaches nothing
    assert not _passes("test_expected_answer", ns)


def _variant_sources(variant) -> dict:
    answers = {gid: c.source for gid, c in _by_id().items() if c.metadata["nbgrader"].get("solution")}
    answers.update(variant.replace)
    for patch in variant.patches:
        answers[patch.grade_id] = answers[patch.grade_id].replace(patch.old, patch.new)
    return answers


MODEL_FREE_ANSWERS = {"dataset", "reward", "advantages", "loss", "logprobs"}
MODEL_FREE_VARIANTS = [v for v in VARIANTS if {p.grade_id for p in v.patches} | set(v.replace) <= MODEL_FREE_ANSWERS]
REFERENCE = SimpleNamespace(name="reference", patches=(), replace={}, expected={})


@pytest.mark.parametrize("variant", [REFERENCE, *MODEL_FREE_VARIANTS], ids=lambda v: v.name)
def test_model_free_hidden_tests_score_the_variants(variant):
    """The same verdicts as tests/test_mutations.py for the cells that need no model, in seconds: wrong
    variants lose exactly the cells their file's EXPECTED names, correct alternatives lose nothing."""
    ns = _with_prompts(_reference(sources=_variant_sources(variant)))
    got = {gid: _passes(gid, ns, _variant_sources(variant)) for gid in MODEL_FREE}
    want = {gid: variant.expected.get(gid, TESTS[gid]) == TESTS[gid] for gid in MODEL_FREE}
    assert got == want, {gid: (got[gid], want[gid]) for gid in MODEL_FREE if got[gid] != want[gid]}


MODEL = ("test_grpo_step", "test_grpo_step_loss", "test_one_rollout", "test_training", "test_training_log")
"""Test cells whose probes run the tiny model (on fixed rollouts, with stand-ins): a few seconds each."""
MODEL_VARIANTS = [v for v in VARIANTS if v.kind == "wrong" and set(v.expected) & set(MODEL)]
"""The wrong variants these cells must catch, in seconds each (every variant, allowed ones included, is graded by
the mutation batch of tests/test_mutations.py too)."""


@pytest.mark.parametrize("variant", [REFERENCE, *MODEL_VARIANTS], ids=lambda v: v.name)
def test_step_and_train_hidden_tests_score_the_variants(variant):
    """As above for the cells of grpo_step and train, which run the tiny model (not the assignment's
    trained one): each wrong variant that declares points there."""
    ns = _reference(sources=_variant_sources(variant), step=True)
    got = {gid: _passes(gid, ns) for gid in MODEL}
    want = {gid: variant.expected.get(gid, TESTS[gid]) == TESTS[gid] for gid in MODEL}
    assert got == want, {gid: (got[gid], want[gid]) for gid in MODEL if got[gid] != want[gid]}


# --- numbers quoted in prose ---------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")


def _numbers(text: str) -> list[str]:
    """Numbers in prose: code spans and LaTeX are examples and formulas, not measurements."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    return [whole.replace(",", "") + (fraction or "") for whole, fraction in NUMBER.findall(text)]


def _matches(quoted: str, printed: list[float]) -> bool:
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return any(abs(float(quoted) - value) <= 0.5 * 10 ** -decimals + 1e-9 for value in printed)


def test_tasks_table_matches_the_bench_results():
    """Issue 2: the suggested tasks' numbers are what bench/bench_tiny_grpo_tasks.py measured (seed 0)."""
    rows = {(r["task"], r["seed"]): r for r in json.loads(BENCH.read_text())["rows"]}
    table = [line for line in _by_id()["part2"].source.splitlines() if line.startswith("| **")]
    names = {"sorting": "sort", "descending": "descending", "addition": "addition", "reversal": "reverse"}
    assert len(table) == 4
    for line in table:
        name = names[re.match(r"\| \*\*(\w+)\*\*", line).group(1)]
        row = rows[(name, 0)]
        cells = [c.strip() for c in line.split("|")[1:-1]]
        quoted = [float(x) for x in re.findall(r"(\d+\.\d) %", " ".join(cells[1:3]))]
        assert quoted == [round(100 * row[k], 1) for k in ("sampled_exact_before", "exact_before", "exact_after")], name
        learnable = row["exact_after"] - row["exact_before"] >= 0.10
        assert cells[3].startswith("yes") == learnable, name
    verdicts = {seed: {task: r["exact_after"] - r["exact_before"] >= 0.10 for (task, s), r in rows.items() if s == seed}
                for seed in (0, 1)}
    assert verdicts[0] == verdicts[1] and sum(verdicts[0].values()) >= 3, verdicts  # "seed 1 gave the same verdicts"
    addition = next(line for line in table if "**addition**" in line)
    minutes = re.search(r"\(about (\d+) min on one CPU thread\)", addition).group(1)
    assert int(minutes) == round(rows[("addition", 0)]["train_seconds"] / 60)


def test_every_model_answer_quotes_measured_numbers():
    """Each model answer states numbers (the slow test checks them against the executed run)."""
    for gid in WRITTEN:
        answer = _by_id()[gid].source.split("### BEGIN SOLUTION", 1)[1]
        assert len(_numbers(answer)) >= 3, gid


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["tiny_grpo"])
def test_model_answers_quote_the_executed_reference(executed_references, assignment):
    """Issue 6: every number in every paragraph of every model answer is one the executed reference printed."""
    executed = nbformat.read(executed_references.reference_dir(assignment) / f"{assignment}.ipynb", as_version=4)
    printed = []
    for cell in executed.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
            printed += [float(n) for n in _numbers(text)]
    stale = [f"{gid}: {n}" for gid in WRITTEN
             for n in _numbers(_by_id()[gid].source.split("### BEGIN SOLUTION", 1)[1]) if not _matches(n, printed)]
    assert not stale, f"numbers the executed reference did not print (re-run it and update the answers): {stale}"


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["tiny_grpo"])
def test_executed_reference_export_and_claims(executed_references, assignment):
    from helpers import submission

    folder = executed_references.reference_dir(assignment)
    report = submission.check_notebook(folder / f"{assignment}.ipynb")
    assert report.ok, report.format()
    # issue 32: the reference's own answers leave a student 6,000 characters of the limit for theirs
    assert report.characters <= submission.CHARACTER_LIMIT - 6_000, f"{report.characters:,} characters"
    assert not report.render_problems, report.format()
    # issue 32: the handout's 3 example prompts and 5 before/after examples (prompt -> output -> reward)
    cells = nbformat.read(folder / f"{assignment}.ipynb", as_version=4).cells
    executed = {c.metadata.get("nbgrader", {}).get("grade_id"): "".join(o.get("text", "") for o in c.get("outputs", []))
                for c in cells}
    assert executed["dataset_run"].count("' -> '") == 3, executed["dataset_run"]
    shown = executed["evaluate"]
    examples = [line for line in shown.splitlines() if " -> before " in line and " | after " in line]
    assert len(examples) == 5 and all(re.search(r"\(\d\.\d\)$", line) for line in examples), shown
    final = json.loads((folder / MANIFEST["robustness"]["metrics"]).read_text())["final"]
    print(f"\ntiny_grpo reference (seed 0): export {report.characters} characters; held-out exact "
          f"{final['exact_before']:.1%} -> {final['exact_after']:.1%}, copies {final['copy_before']:.1%} -> "
          f"{final['copy_after']:.1%}")
    for name, (op, bound) in MANIFEST["robustness"]["checks"].items():
        value = final[name.split(".", 1)[1]]
        assert value >= bound if op == ">=" else value <= bound, (name, value)


def test_students_write_the_evaluation_and_answer_their_prediction():
    """Issue 42: Cell 7's before/after evaluation is the student's code, and Part 1's prediction is asked for
    in Cell 8 (graded with Evaluation); no kit helper evaluates for them."""
    from helpers import tiny_grpo_tools

    cells = _by_id(RELEASE)
    evaluate = cells["evaluate"]
    assert evaluate.metadata["nbgrader"]["solution"] and "NotImplementedError" in evaluate.source
    assert "BASE_OUT" in evaluate.source and not hasattr(tiny_grpo_tools, "greedy_before_after")
    assert "Predict first" in cells["toy_train_md"].source and "prediction" in cells["q_evaluation"].source
