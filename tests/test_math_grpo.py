"""math_grpo: the handout's point structure, and written answers that quote the executed run.

The model answers of the written problems state what the reference run measured ("*In our run
(tiny profile)*: ..."). Those numbers must come from the run, so the slow test reads every number
of a model answer (up to its rubric) and looks for it among the numbers the executed reference
printed in the cells of the same problem (between the previous written answer and this one), or
among the tiny profile's settings in the config cell. A number found in neither means the answer
is stale: re-run the notebook and update the answer.
"""
from __future__ import annotations

import ast
import re

import nbformat
import pytest

from autograder.manifest import REPO_ROOT

SOLUTION = REPO_ROOT / "solutions" / "math_grpo" / "math_grpo.ipynb"
WRITTEN = {"q_baseline": 4, "q_train_loop": 4, "q_learning_rate": 4, "q_baselines": 4, "q_length_norm": 4,
           "q_std_norm": 4, "q_off_policy": 4, "q_async": 4, "q_kl": 4, "q_keyword": 8}
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+")
# Every number of an answer: integers, decimals, scientific notation, percentages; not digits inside words
# (r1_zero, Qwen2.5-Math-1.5B) or identifiers.
QUOTED = re.compile(r"(?<![\w.$\\-])-?\d+(?:\.\d+)?(?:e-?\d+)?(?:\s?%)?(?!\w|\.\d)")
TOLERANCE = 0.0051  # printed numbers are rounded to 2-3 decimals; the answers quote them as printed


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _cells():
    return nbformat.read(SOLUTION, as_version=4).cells


def test_points_follow_the_handout():
    """56 autograded points (the handout's 14 unit tests x 4) and 44 written (Problems 1, 8-15 x 4, 16 x 8)."""
    cells = _cells()
    graded = [c for c in cells if _meta(c).get("grade")]
    tests = {_meta(c)["grade_id"]: _meta(c)["points"] for c in graded if c.cell_type == "code"}
    written = {_meta(c)["grade_id"]: _meta(c)["points"] for c in graded if c.cell_type == "markdown"}
    assert sum(tests.values()) == 56, tests
    assert written == WRITTEN
    assert sum(tests.values()) + sum(written.values()) == 100


def test_requirements_stated_in_the_todo():
    """Each test cell checks one requirement; the TODO before it states that requirement's points."""
    cells = _cells()
    for i, cell in enumerate(cells):
        meta = _meta(cell)
        if not (meta.get("grade") and cell.cell_type == "code"):
            continue
        todo = next(c for c in reversed(cells[:i]) if _meta(c).get("solution") and c.cell_type == "code")
        points = meta["points"]
        stated = f"({points:g} point{'s' if points != 1 else ''})"
        assert stated in todo.source, f"{meta['grade_id']}: its TODO ({_meta(todo)['grade_id']}) never says {stated!r}"


def test_no_handout_in_student_text():
    for cell in _cells():
        text = cell.source
        if _meta(cell).get("solution") or "### BEGIN HIDDEN TESTS" in text:
            text = re.sub(r"### BEGIN (SOLUTION|HIDDEN TESTS).*?### END (SOLUTION|HIDDEN TESTS)", "", text, flags=re.S)
        assert "handout" not in text.lower(), f"{_meta(cell).get('grade_id')}: says 'handout', which students never had"


def _answer_body(text: str) -> str:
    """The model answer up to its rubric, without LaTeX, code blocks or references to Problems."""
    body = text.split("*Rubric", 1)[0].replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "")
    body = re.sub(r"\$[^$]*\$", " ", body)
    body = re.sub(r"Problems? \d+(?:\s?[–-]\s?\d+)?", " ", body)
    body = re.sub(r"et al\. \d{4}", " ", body)  # citation years
    return body


def _value(token: str) -> tuple[float, bool]:
    token = token.replace(" ", "")
    percent = token.endswith("%")
    return float(token.rstrip("%")), percent


def _quoted_numbers(text: str) -> list[str]:
    return QUOTED.findall(_answer_body(text))


def _printed_numbers(cells) -> list[float]:
    found = []
    for cell in cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
            found += [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)]
    return found


def _settings(cells) -> list[float]:
    """Every number in the config cell's source (the profiles' settings), as the answers may quote them."""
    source = "\n".join(c.source for c in cells if _meta(c).get("grade_id") in ("config", "grpo_config"))
    constants = [node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)]
    return [float(v) for v in constants if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _found(token: str, known: list[float]) -> bool:
    value, percent = _value(token)
    candidates = [value / 100, value] if percent else [value]
    tolerance = TOLERANCE if "." in token or percent else 1e-9
    return any(abs(c - k) <= (0.0051 if percent and c < 1 else tolerance) for c in candidates for k in known)


def test_every_written_answer_quotes_the_run():
    """Each model answer has an 'In our run' sentence with numbers (the slow test checks them)."""
    for cell in _cells():
        gid = _meta(cell).get("grade_id")
        if gid in WRITTEN:
            assert re.search(r"\*In our run[^*]*\*", cell.source), f"{gid}: the model answer has no '*In our run ...*:'"
            assert DECIMAL.findall(_answer_body(cell.source)), f"{gid}: the model answer quotes no measured number"


def test_quoted_number_parser():
    text = ("### BEGIN SOLUTION\n*In our run (tiny profile, 16 steps)*: 0.255 to 0.525, 10 of 200, 2 %, 3e-3; "
            "r1_zero and Qwen2.5-Math-1.5B and $G-1$ and Problem 12 are not numbers.\n*Rubric (4):* 2 for x\n")
    assert _quoted_numbers(text) == ["16", "0.255", "0.525", "10", "200", "2 %", "3e-3"]
    assert _found("0.40", [0.4]) and _found("2 %", [0.019]) and not _found("77", [76.0, 78.0])


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["math_grpo"])
def test_model_answers_quote_the_executed_reference(executed_references, assignment):
    executed = nbformat.read(executed_references.reference_dir(assignment) / f"{assignment}.ipynb", as_version=4).cells
    answers = {_meta(c).get("grade_id"): c.source for c in _cells()}
    settings = _settings(executed)
    ids = [_meta(c).get("grade_id") for c in executed]
    stale = []
    start = 0
    for index, gid in enumerate(ids):
        if gid not in WRITTEN:
            continue
        known = _printed_numbers(executed[start:index]) + settings
        stale += [f"{gid}: {quoted}" for quoted in _quoted_numbers(answers[gid]) if not _found(quoted, known)]
        start = index + 1
    assert not stale, ("numbers quoted in model answers that the executed reference did not print in the same "
                       f"problem's cells and that are no setting of the config cell (re-run the notebook and update "
                       f"the answers): {stale}")


def _cell_source(grade_id: str) -> str:
    return next(c.source for c in _cells() if _meta(c).get("grade_id") == grade_id)


def test_empty_keyword_data_skips_problem_16(tmp_path, capsys):
    """A generator that satisfies no keyword prompt (random weights on the GPU smoke run) must not crash
    the keyword cells: the data cell says what happened and what to do, the training cell skips."""
    import types

    def no_hits(model, tokenizer, prompts, group_size, *args, **kwargs):
        text = "<think> x </think> <answer> y </answer>"  # no keyword of any prompt
        return types.SimpleNamespace(completions=[text] * len(prompts) * group_size)

    stubs = types.SimpleNamespace(sample_completions=no_hits)
    names = {"AUTOGRADING": False, "PROFILE": "tiny", "MODEL_ID": "m", "ARTIFACTS": tmp_path, "RUN_DIR": tmp_path,
             "CFG": {"keyword": {"tries": 2, "max_tokens": 8}}, "grpo": stubs, "torch": __import__("torch"),
             "random": __import__("random"), "json": __import__("json"), "time": __import__("time"),
             "math_tasks": types.SimpleNamespace(format_r1_zero=lambda q: q), "fresh_policy": lambda: None,
             "tokenizer": None, "truncate_at_stop": lambda rollout, tokenizer: rollout}
    exec(_cell_source("keyword_reward"), names)
    exec(_cell_source("keyword_data"), names)
    assert names["keyword_train"] == [] and names["keyword_val"] == []
    exec(_cell_source("keyword_train"), names)
    out = capsys.readouterr().out
    assert "kept 0 of" in out and "What to do" in out, out
    assert "Problem 16's training is skipped" in out and names["keyword_history"] is None, out
    assert not (tmp_path / "keyword_data").exists()


def test_problem_14_without_ray_skips(monkeypatch, capsys):
    """Without Ray the run cell says so and how to install it, and the plot cell draws nothing."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError

    def start_ray():
        raise AssertionError("start_ray called without Ray")

    names = {"AUTOGRADING": False, "start_ray": start_ray, "async_runs": {}}
    exec(_cell_source("async_run"), names)
    exec(_cell_source("async_plot"), names)
    out = capsys.readouterr().out
    assert "Problem 14 is skipped" in out and "pip install 'ray" in out, out


def test_the_reallocation_note_states_the_cells_points():
    """Issue 32: the title's note on the reallocation against the test cells' points (its table is generated from
    the tests' POINTS, tests/test_points_home.py)."""
    import re

    cells = _cells()
    title = " ".join(next(c for c in cells if _meta(c).get("grade_id") == "title").source.split())
    graded = [c for c in cells if _meta(c).get("grade") and c.cell_type == "code"]
    points = {_meta(c)["grade_id"]: _meta(c)["points"] for c in graded}
    groups = {"the dispatcher": "test_policy_gradient_loss", "masked mean": "test_masked_mean",
              "tokenization": "test_tokenize_prompt_and_output", "entropy": "test_compute_entropy",
              "log-probs": "test_get_response_log_probs", "masked normalize": "test_masked_normalize"}
    note = title.split("keeps the total", 1)[1].split("The table above", 1)[0]
    for name, prefix in groups.items():
        stated = int(re.search(rf"{re.escape(name)} (\d+)", note).group(1))
        assert stated == sum(p for gid, p in points.items() if gid == prefix or gid.startswith(prefix + "_")), name
    assert "dispatcher 12, masked mean 16" in title and sum(points.values()) == 56


def test_the_release_gives_problem_8s_sanity_asserts():
    """Issue 32: the original assignment hands students these asserts for the train loop; the release keeps them."""
    release = nbformat.read(REPO_ROOT / "notebooks" / "math_grpo" / "math_grpo.ipynb", as_version=4)
    loop = next(c.source for c in release.cells if "def grpo_train_loop(" in c.source)
    for given in ("train_batch_size must be divisible by gradient_accumulation_steps",
                  "rollout_batch_size must be divisible by group_size",
                  "train_batch_size must be greater than or equal to group_size",
                  "n_microbatches_per_rollout_batch = cfg.rollout_batch_size // micro_train_batch_size"):
        assert given in loop, given
    assert "raise NotImplementedError" in loop


# --- The optional part "Beyond the assignment" (not graded) ---------------------------------------------------------

RELEASE = REPO_ROOT / "notebooks" / "math_grpo" / "math_grpo.ipynb"
BEYOND = {  # answer cell -> (its function, its self-check cell)
    "token_loss_aggregation": ("aggregate_token_loss", "check_token_loss_aggregation"),
    "clip_higher": ("clip_higher_loss", "check_clip_higher"),
    "informative_groups": ("keep_informative_groups", "check_informative_groups"),
    "overlong_filter": ("drop_truncated", "check_overlong_filter"),
    "k3_estimator": ("k3_kl", "check_k3_estimator"),
}


def _run_cells(grade_ids, notebook=SOLUTION, **names) -> dict:
    """The namespace after exec'ing these cells of ``notebook`` with the imports they use."""
    import math
    from typing import Literal

    import torch

    cells = {_meta(c).get("grade_id"): c.source for c in nbformat.read(notebook, as_version=4).cells}
    space = {"math": math, "torch": torch, "Literal": Literal, "AUTOGRADING": False, **names}
    for gid in grade_ids:
        exec(cells[gid], space)
    return space


def test_the_beyond_part_is_optional_ungraded_and_before_the_wrap_up():
    cells = _cells()
    ids = [_meta(c).get("grade_id") for c in cells]
    part = cells[ids.index("ablation_prompt") + 1 : ids.index("wrap_up")]
    assert [_meta(c)["grade_id"] for c in part if _meta(c).get("solution")] == list(BEYOND)
    for cell in part:
        meta = _meta(cell)
        assert not meta.get("grade") and "points" not in meta, meta
        assert meta.get("locked") != meta.get("solution"), meta  # an answer cell, or locked scaffolding
        if cell.cell_type == "code" and not meta.get("solution"):
            assert "if AUTOGRADING:" in cell.source or "if ABLATIONS and RUN_BEYOND:" in cell.source, meta["grade_id"]
    for answer, (_, check) in BEYOND.items():
        assert ids[ids.index(answer) + 1] == check, f"{answer}: its self-check does not follow it"
    assert "optional and not graded" in part[0].source and "skipped\nwhile autograding" in part[0].source


def test_the_release_holds_no_answer_of_the_beyond_part():
    release = {_meta(c).get("grade_id"): c.source for c in nbformat.read(RELEASE, as_version=4).cells}
    for answer in BEYOND:
        solution = _cell_source(answer).split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
        shown = release[answer]
        assert "raise NotImplementedError()" in shown and "### BEGIN SOLUTION" not in shown, answer
        leaked = [line.strip() for line in solution.splitlines() if line.strip() and line.strip() in shown]
        assert not leaked, f"{answer}: the release shows {leaked}"


@pytest.mark.parametrize("answer", list(BEYOND))
def test_each_self_check_skips_an_unimplemented_function_and_passes_the_reference(answer, capsys):
    function, check = BEYOND[answer]
    _run_cells([answer, check], notebook=RELEASE)  # the release: the placeholder raises NotImplementedError
    out = capsys.readouterr().out.strip()
    assert out == f"{function} is not implemented (optional): self-check skipped", out
    _run_cells([answer, check])
    assert capsys.readouterr().out.strip() == f"{function}: ok"
    _run_cells([answer, check], notebook=RELEASE, AUTOGRADING=True)
    assert capsys.readouterr().out.strip() == "optional part: skipped while autograding"


def test_the_k3_demo_skips_an_unimplemented_k3_and_states_the_bias(capsys):
    _run_cells(["k3_estimator", "k3_bias_demo"], notebook=RELEASE)
    assert capsys.readouterr().out.strip() == "k3_kl is not implemented (optional): demo skipped"
    _run_cells(["k3_estimator", "k3_bias_demo"])
    out = capsys.readouterr().out
    assert "[0.5, -0.1, -0.4]" in out and "its gradient that of KL(ref || pi)" in out, out  # pi - ref, by hand


def test_aggregate_token_loss_weighs_each_token_as_its_formula_says():
    import torch

    aggregate = _run_cells(["token_loss_aggregation"])["aggregate_token_loss"]
    lengths, width, budget = [4, 1, 2], 4, 6
    mask = torch.tensor([[t < n for t in range(width)] for n in lengths])  # [3, 4] bool
    for mode, weight in (("sequence_mean", lambda n: 1 / (3 * n)), ("token_mean", lambda n: 1 / 7),
                         ("constant", lambda n: 1 / (3 * budget))):
        loss = torch.randn(3, width, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
        loss.requires_grad_()
        value = aggregate(loss, mask, mode, max_tokens=budget)
        value.backward()
        want = torch.tensor([[weight(n) if t < n else 0.0 for t in range(width)] for n in lengths], dtype=torch.float64)
        assert torch.allclose(loss.grad, want), (mode, loss.grad)  # the value is linear in the losses
        assert torch.isclose(value, (loss.detach() * want).sum()), mode
    for bad in (dict(mode="mean"), dict(mode="constant")):
        with pytest.raises(ValueError, match="mode"):
            aggregate(torch.ones(2, 2), torch.ones(2, 2), **bad)


def test_clip_higher_loss_is_problem_4s_loss_with_a_higher_upper_clip():
    import torch

    names = _run_cells(["grpo_clip_loss", "clip_higher"])
    clip_higher, grpo_clip = names["clip_higher_loss"], names["compute_grpo_clip_loss"]
    gen = torch.Generator().manual_seed(3)
    adv = torch.randn(4, 1, generator=gen, dtype=torch.float64)  # [4, 1]
    new, old = (0.4 * torch.randn(4, 6, generator=gen, dtype=torch.float64) for _ in range(2))  # [4, 6]
    assert torch.allclose(clip_higher(adv, new, old, 0.2, 0.2), grpo_clip(adv, new, old, 0.2)[0])
    ratio = torch.exp(new - old)
    upper = torch.minimum(ratio, torch.tensor(1.3)) * adv  # A > 0 rows can only be cut at 1 + eps_high
    lower = torch.maximum(ratio, torch.tensor(0.9)) * adv  # A < 0 rows only at 1 - eps_low
    want = -torch.where(adv > 0, upper, torch.where(adv < 0, lower, ratio * adv))
    assert torch.allclose(clip_higher(adv, new, old, 0.1, 0.3), want)
    with pytest.raises(ValueError, match="eps_low"):
        clip_higher(adv, new, old, 1.0, 0.3)


def test_keep_informative_groups_drops_only_groups_of_equal_rewards():
    import torch

    keep = _run_cells(["informative_groups"])["keep_informative_groups"]
    rewards = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.7, 0.7, 0.7, 0.7])
    assert keep(rewards, 4).tolist() == [False] * 4 + [True] * 4 + [False] * 4
    assert keep(rewards, 6).tolist() == [False] * 6 + [True] * 6
    assert keep(rewards, 1).tolist() == [False] * 12  # one response: nothing to compare with
    with pytest.raises(ValueError, match="group_size"):
        keep(rewards, 5)


def test_k3s_gradient_is_the_gradient_of_the_forward_kl():
    """The claim of the k3 cell, on another distribution: E_pi[grad k3] = grad KL(ref || pi) != grad KL(pi || ref)."""
    import torch

    k3 = _run_cells(["k3_estimator"])["k3_kl"]
    gen = torch.Generator().manual_seed(11)
    theta = torch.randn(5, generator=gen, dtype=torch.float64, requires_grad=True)
    log_ref = torch.log_softmax(torch.randn(5, generator=gen, dtype=torch.float64), dim=0)
    log_pi = torch.log_softmax(theta, dim=0)
    pi, ref = log_pi.exp(), log_ref.exp()

    def grad(value):
        return torch.autograd.grad(value, theta, retain_graph=True)[0]

    values = k3(log_pi, log_ref)  # [5]
    assert bool((values >= 0).all())
    expected_k3 = (pi.detach() * values).sum()
    assert torch.isclose(expected_k3, (pi * (log_pi - log_ref)).sum())  # the value is unbiased
    assert torch.allclose(grad(expected_k3), (pi - ref).detach())  # d KL(ref || softmax(theta)) / d theta
    assert not torch.allclose(grad(expected_k3), grad((pi * (log_pi - log_ref)).sum()), atol=1e-3)


def test_the_aggregation_ablation_gives_problem_7s_step_each_modes_loss():
    """The ablation's wrapper over the reference microbatch step yields aggregate_token_loss's loss and gradient."""
    import torch

    budget = 5
    names = _run_cells(["naive_policy_gradient_loss", "grpo_clip_loss", "policy_gradient_loss", "masked_mean",
                        "masked_normalize", "microbatch_train_step", "token_loss_aggregation", "ablation_aggregation"],
                       ABLATIONS=False, CFG={"train": {"sampling_max_tokens": budget}})
    assert names["aggregation_runs"] == {}  # ABLATIONS off: nothing trains
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]])  # [3, 4]
    adv = torch.tensor([[1.0], [-2.0], [0.5]])  # [3, 1]
    start = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    for mode in names["AGGREGATIONS"]:
        lengths = []
        step = names["aggregating"](names["grpo_microbatch_train_step"], mode, lengths)
        log_probs = start.clone().requires_grad_()
        loss, _ = step(log_probs, mask, 1, "reinforce_with_baseline", advantages=adv,  # as the loop calls it
                       length_normalization="masked_mean", constant_normalizer=budget)
        direct = start.clone().requires_grad_()
        want = names["aggregate_token_loss"](-adv * direct, mask, mode, max_tokens=budget)
        want.backward()
        assert torch.isclose(loss, want), mode
        assert torch.allclose(log_probs.grad, direct.grad), mode
        assert lengths == [pytest.approx(8 / 3)]
    with pytest.raises(ValueError, match="aggregation"):
        names["aggregating"](names["grpo_microbatch_train_step"], "mean", [])


def test_an_untouched_beyond_part_leaves_the_notebook_ready_to_submit(tmp_path):
    """Every graded TODO done, the four optional functions as released: ready, with four optional TODOs open."""
    from autograder.authoring.course import fill_release
    from helpers import submission

    done = tmp_path / "math_grpo.ipynb"
    fill_release(RELEASE, SOLUTION, done)
    released = {_meta(c).get("grade_id"): c.source for c in nbformat.read(RELEASE, as_version=4).cells}
    nb = nbformat.read(done, as_version=4)
    for cell in nb.cells:
        if _meta(cell).get("grade_id") in BEYOND:
            cell.source = released[_meta(cell)["grade_id"]]
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = 1, [nbformat.v4.new_output("stream", text="ran\n")]
    nbformat.write(nb, done)
    report = submission.check_notebook(done)
    assert report.ok and len(report.optional) == len(BEYOND), report.format()
