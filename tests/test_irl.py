"""Tests for helpers.irl and helpers.irl_plots (the maxent_irl scaffolding) and for the maxent_irl
notebook's text: its numbers against the executed reference, hints that hold no answer line, hidden
tests that draw only from generators they create, the pack cell."""
import difflib
import io
import math
import re
import tokenize
import zipfile
from itertools import product
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import irl, irl_plots  # noqa: E402

# --- reference definitions, written as per-triple rules like the handout ------------------

def _icy_prob(size, p_slip, s_from, s_to, a):
    """The handout's icy-grid rule for one (s_from, s_to, a), evaluated with Python floats."""
    n_actions = 4
    fx, fy = s_from % size, s_from // size
    tx, ty = s_to % size, s_to // size
    ax, ay = irl.ACTIONS[a]
    if (fx + ax, fy + ay) == (tx, ty):
        return 1.0 - p_slip + p_slip / n_actions
    if abs(fx - tx) + abs(fy - ty) == 1:
        return p_slip / n_actions
    if (fx, fy) == (tx, ty):
        on_x_edge = not 0 < fx < size - 1
        on_y_edge = not 0 < fy < size - 1
        if not (0 <= fx + ax < size and 0 <= fy + ay < size):
            if on_x_edge and on_y_edge:
                return 1.0 - p_slip + 2.0 * p_slip / n_actions
            return 1.0 - p_slip + p_slip / n_actions
        if on_x_edge and on_y_edge:
            return 2.0 * p_slip / n_actions
        if on_x_edge or on_y_edge:
            return p_slip / n_actions
    return 0.0


def _plain_prob(size, s_from, s_to, a):
    fx, fy = s_from % size, s_from // size
    tx, ty = s_to % size, s_to // size
    ax, ay = irl.ACTIONS[a]
    if (fx + ax, fy + ay) == (tx, ty):
        return 1.0
    if (fx, fy) == (tx, ty) and not (0 <= fx + ax < size and 0 <= fy + ay < size):
        return 1.0
    return 0.0


def _loop_table(size, rule):
    n = size * size
    table = np.zeros((n, n, 4), dtype=np.float32)
    for s_from, s_to, a in product(range(n), range(n), range(4)):
        table[s_from, s_to, a] = rule(s_from, s_to, a)
    return table


def _handout_policy(world, value, exponent=50):
    """exp(V(next)) ** 50, normalised per state: the handout's (overflow-prone) expert."""
    softened = np.exp(value.astype(np.float64))
    prefs = np.zeros((world.n_states, world.n_actions))
    for s in range(world.n_states):
        for a in range(world.n_actions):
            prefs[s, a] = softened[world._step_intended(s, a)] ** exponent
    return (prefs / prefs.sum(axis=1, keepdims=True)).astype(np.float32)


# --- transition tables --------------------------------------------------------------------

@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("p_slip", [0.0, 0.2, 0.5])
def test_icy_table_matches_per_triple_rule(size, p_slip):
    world = irl.IcyGridWorld(size, p_slip)
    expected = _loop_table(size, lambda s, t, a: _icy_prob(size, p_slip, s, t, a))
    assert world.p_transition.dtype == np.float32
    assert world.p_transition.shape == (size * size, size * size, 4)
    np.testing.assert_array_equal(world.p_transition, expected)  # bit for bit


@pytest.mark.parametrize("size", [2, 3, 5])
def test_plain_table_matches_per_triple_rule(size):
    world = irl.GridWorld(size)
    np.testing.assert_array_equal(world.p_transition, _loop_table(size, lambda s, t, a: _plain_prob(size, s, t, a)))


@pytest.mark.parametrize("world", [irl.GridWorld(4), irl.IcyGridWorld(5, 0.2), irl.IcyGridWorld(20, 0.3)],
                         ids=["plain4", "icy5", "icy20"])
def test_rows_are_distributions(world):
    sums = world.p_transition.astype(np.float64).sum(axis=1)  # (S, A)
    np.testing.assert_allclose(sums, 1.0, atol=1e-6)
    assert (world.p_transition >= 0).all()


def test_intended_next_states_match_step_intended():
    world = irl.IcyGridWorld(4, 0.2)
    nxt = irl.intended_next_states(world)
    for s in range(world.n_states):
        for a in range(world.n_actions):
            assert nxt[s, a] == world._step_intended(s, a)


def test_state_features_are_one_hot():
    world = irl.IcyGridWorld(3, 0.1)
    np.testing.assert_array_equal(irl.state_features(world), np.eye(9, dtype=np.float32))


# --- expert -------------------------------------------------------------------------------

def test_stable_policy_matches_handout_formula_where_it_is_finite():
    world, reward, _ = irl.setup_training_world()
    value = irl.value_iteration(world.p_transition, reward, discount=0.9)
    assert value.max() < 14  # the handout's formula is still finite here
    np.testing.assert_allclose(irl.stochastic_policy_from_value(world, value), _handout_policy(world, value),
                               rtol=0, atol=1e-6)
    rng = np.random.default_rng(0)
    for _ in range(5):
        v = rng.uniform(-3, 10, world.n_states).astype(np.float32)
        np.testing.assert_allclose(irl.stochastic_policy_from_value(world, v), _handout_policy(world, v), atol=1e-6)


def test_stable_policy_is_finite_where_handout_formula_overflows():
    world = irl.IcyGridWorld(5, 0.2)
    value = np.linspace(0, 40, world.n_states)
    with np.errstate(all="ignore"):
        assert not np.isfinite(_handout_policy(world, value)).all()
    policy = irl.stochastic_policy_from_value(world, value)
    assert np.isfinite(policy).all()
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, atol=1e-6)


def test_value_iteration_is_a_fixed_point():
    world, reward, _ = irl.setup_training_world()
    v = irl.value_iteration(world.p_transition, reward, discount=0.9).astype(np.float64)
    q = reward[:, None] + 0.9 * np.einsum("ska,k->sa", world.p_transition.astype(np.float64), v)
    np.testing.assert_allclose(q.max(axis=1), v, atol=1e-3)


# --- demonstrations -----------------------------------------------------------------------

def _summary(demos):
    return [(t.state_sequence().tolist(), [tr.action for tr in t.transitions()]) for t in demos]


def test_demonstrations_reproducible_for_seed_11():
    world, reward, terminal = irl.setup_training_world()
    first = irl.generate_expert_data(world, reward, terminal)
    again = irl.generate_expert_data(*irl.setup_training_world())
    assert _summary(first) == _summary(again)
    assert len(first) == 200
    assert all(t.state_sequence()[0] == 0 and t.state_sequence()[-1] == 24 for t in first)
    # snapshot of the handout's demonstrations for seed 11 (computed with its own code)
    assert first[0].state_sequence().tolist() == [0, 1, 0, 1, 2, 7, 8, 13, 18, 23, 24]
    assert sum(len(t) for t in first) == 1938
    other = irl.generate_expert_data(world, reward, terminal, irl.Expert(seed=12))
    assert _summary(other) != _summary(first)


def test_demonstrations_follow_handout_rng_pattern():
    """Same draws as the handout: start via rng.choice(starts), then action, next state per step."""
    world, reward, terminal = irl.setup_training_world()
    value = irl.value_iteration(world.p_transition, reward, 0.9)
    policy = _handout_policy(world, value)
    rng = np.random.default_rng(11)
    expected = []
    for _ in range(200):
        state = rng.choice(np.array([0]))
        states, actions = [int(state)], []
        while state not in set(terminal.tolist()):
            action = rng.choice(world.n_actions, p=policy[state])
            state = rng.choice(world.n_states, p=world.p_transition[state, :, action])
            states.append(int(state))
            actions.append(int(action))
        expected.append((states, actions))
    assert _summary(irl.generate_expert_data(world, reward, terminal)) == expected


def test_trajectory_containers():
    empty = irl.Trajectory([])
    assert empty.state_sequence().size == 0 and len(empty) == 0
    t = irl.Trajectory([irl.Transition(0, 1, 3), irl.Transition(3, 0, 4)])
    assert t.state_sequence().tolist() == [0, 3, 4]
    assert t.state_sequence().dtype == np.int64


# --- plots --------------------------------------------------------------------------------

def test_plots_return_figures():
    world, reward, terminal = irl.setup_training_world()
    value = irl.value_iteration(world.p_transition, reward, 0.9)
    policy = irl.stochastic_policy_from_value(world, value)
    learned = reward + np.random.default_rng(0).normal(0, 0.1, world.n_states)
    figures = [
        irl_plots.plot_reward_comparison(world, reward, learned),
        irl_plots.plot_policy(world, policy, background=reward, terminal=terminal),
        irl_plots.plot_policy(world, policy),
        irl_plots.plot_visitation(world, np.ones(world.n_states), np.full(world.n_states, 2.0)),
        irl_plots.plot_feature_gap({"a": [1.0, 0.5, 0.25], "b": [2.0, 1.0]}),
    ]
    for fig in figures:
        assert isinstance(fig, matplotlib.figure.Figure)
        fig.canvas.draw()
    # one colour scale for both reward panels
    images = [ax.images[0] for ax in figures[0].axes if ax.images]
    assert len(images) == 2 and images[0].get_clim() == images[1].get_clim()
    plt.close("all")


# --- the checks the skeleton of TODO 3 calls ---------------------------------------------------

def test_check_sweep_shape_names_todo_3():
    irl.check_sweep_shape(np.zeros((4, 2)), 4, 2)
    for wrong in (np.zeros(8), np.zeros((2, 4)), np.zeros((4, 2, 1))):
        with pytest.raises(ValueError, match=r"TODO 3 \(backward step\): Za must have shape \(S, A\) = \(4, 2\)"):
            irl.check_sweep_shape(wrong, 4, 2)


def test_check_forward_mass_accepts_what_a_correct_push_produces():
    world, reward, terminal = irl.setup_training_world()
    d = np.zeros((4, world.n_states))
    d[0, 0] = 1.0
    step = world.p_transition[:, :, 0].astype(np.float64)    # float32 rows: sums are 1 only to ~1e-7
    step = step * (1 + 5e-7)                                 # a little more than float32 rounding ever gives
    step[terminal] = 0.0
    for t in range(1, 4):
        d[t] = d[t - 1] @ step
    irl.check_forward_mass(d, (4, world.n_states))
    irl.check_forward_mass(np.array([[1.0, 0.0], [0.3, 0.2], [0.0, 0.0]]))           # mass leaves: fine
    irl.check_forward_mass(np.array([[1.0, 0.0], [np.nan, np.nan], [np.nan, 0.0]]))  # overflowed: not judged


def test_check_forward_mass_names_the_forward_push():
    with pytest.raises(ValueError, match=r"TODO 3 \(forward push\): d\[2\] holds probability mass 2 .* creates mass"):
        irl.check_forward_mass(np.array([[1.0, 0.0], [0.5, 0.5], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"TODO 3 \(forward push\): d\[1, 0\] = -0.5 is negative"):
        irl.check_forward_mass(np.array([[1.0, 0.0], [-0.5, 0.5]]))
    with pytest.raises(ValueError, match=r"TODO 3 \(forward push\): d must stay shape \(3, 2\)"):
        irl.check_forward_mass(np.zeros((2, 3)), (3, 2))


# --- the notebook's text -----------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
SOLUTION = REPO / "solutions" / "maxent_irl" / "maxent_irl.ipynb"
RELEASE = REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"


def _cells_by_id(notebook):
    return {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_students_read_nothing_about_a_handout():
    """The notebook names its own sections; the helpers students install say nothing about a handout either."""
    release = nbformat.read(RELEASE, as_version=4)
    for cell in release.cells:
        assert "handout" not in cell.source.lower(), (cell.metadata.get("nbgrader", {}).get("grade_id"), cell.source)
    for module in (irl, irl_plots):
        assert "handout" not in Path(module.__file__).read_text().lower(), module.__name__


def _tokens(line: str) -> list[str]:
    """A line's code tokens, normalised: no `np.`, `1.0` is `1`, `<-` and `:=` are `=`."""
    line = line.replace("<-", "=").replace(":=", "=").replace("np.", "").replace("numpy.", "")
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
            if tok.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER):
                text = tok.string
                if tok.type == tokenize.NUMBER and re.fullmatch(r"\d+\.0*", text):
                    text = text.split(".")[0]
                out.append(text)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out = re.findall(r"[A-Za-z_]\w*|\d+|[^\s\w]", line)
    return out


def _solution_lines(notebook) -> list[str]:
    lines = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and "### BEGIN SOLUTION" in cell.source:
            block = cell.source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
            lines += [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if len(_tokens(line)) >= 6]


def _prose_lines(notebook) -> list[str]:
    """Every line a student reads as text: markdown, comments, docstrings and other strings."""
    lines = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            lines += re.sub(r"`([^`]*)`", r" \1 ", cell.source).splitlines()
            continue
        for line in cell.source.splitlines():
            if "#" in line:
                lines.append(line.split("#", 1)[1])
        lines += [m.group(1) for m in re.finditer(r"\"([^\"\n]{12,})\"", cell.source)]
        lines += re.findall(r'"""(.*?)"""', cell.source, flags=re.S)
    return lines


def _answer_lines_in_prose(notebook) -> list[tuple[str, str]]:
    """(answer line, the prose line that nearly spells it out) for the notebook's TODO answers."""
    solutions = [(line, _tokens(line)) for line in _solution_lines(nbformat.read(SOLUTION, as_version=4))
                 if not line.startswith(("def ", "return ", "for ", "if "))]
    found = []
    for prose in _prose_lines(notebook):
        for chunk in re.split(r"[;]|\bthen\b", prose):
            tokens = _tokens(chunk)
            if len(tokens) < 6:
                continue
            for line, answer in solutions:
                if difflib.SequenceMatcher(None, tokens, answer, autojunk=False).ratio() >= 0.75:
                    found.append((line, chunk.strip()))
    return found


def test_no_hint_spells_out_an_answer_line():
    """Issue: TODO 4's comment `omega <- omega * exp(lr / (1 + step) * gradient)` was the answer line."""
    leaks = _answer_lines_in_prose(nbformat.read(RELEASE, as_version=4))
    assert not leaks, "\n".join(f"answer {line!r} is nearly spelled out by {prose!r}" for line, prose in leaks)


def test_the_answer_line_detector_finds_the_old_todo_4_hint():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(
        "# TODO: gradient = empirical - model_features; then the exponentiated step\n"
        "# omega <- omega * exp(lr / (1 + step) * gradient).\n")]
    leaks = _answer_lines_in_prose(notebook)
    assert any("omega" in line and "exp" in line for line, _ in leaks), leaks


def _hidden_blocks(notebook) -> dict[str, str]:
    blocks = {}
    for cell in notebook.cells:
        if "### BEGIN HIDDEN TESTS" in cell.source:
            gid = cell.metadata["nbgrader"]["grade_id"]
            blocks[gid] = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]
    return blocks


def test_each_test_cell_calls_its_hidden_test_file():
    """The hidden part of every graded cell is one call; the checks are files under tests/ (judged outside)."""
    blocks = _hidden_blocks(nbformat.read(SOLUTION, as_version=4))
    assert len(blocks) == 9, sorted(blocks)
    for gid, block in blocks.items():
        assert f'hidden_test("maxent_irl", "{gid}")' in block, gid
        assert (REPO / "solutions" / "maxent_irl" / "tests" / f"{gid}.py").is_file(), gid


def test_points_quoted_in_the_text_match_the_test_cells():
    """The title's table and each TODO's '(N points)' against the points of the test cells."""
    notebook = nbformat.read(SOLUTION, as_version=4)
    cells = _cells_by_id(notebook)
    order = [c.metadata["nbgrader"]["grade_id"] for c in notebook.cells]
    points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"].get("points", 0) for c in notebook.cells
              if c.metadata["nbgrader"].get("grade") and c.cell_type == "code"}
    per_todo = {}
    for k in range(1, 5):
        start = order.index(f"todo{k}_intro")
        stop = order.index(f"todo{k + 1}_intro") if k < 4 else order.index("plots_intro")
        tests = [gid for gid in order[start:stop] if gid in points]
        per_todo[k] = tests
        quoted = [int(n) for n in re.findall(r"\((\d+) points?\)", cells[f"todo{k}_intro"].source)]
        assert quoted == [sum(points[t] for t in tests)] + [points[t] for t in tests], (k, quoted, tests)
    title = cells["title"].source
    rows = [int(n) for n in re.findall(r"\| TODO \d: [^|]+ \| (\d+) \|", title)]  # generated from POINTS
    assert rows == [sum(points[t] for t in per_todo[k]) for k in range(1, 5)], rows
    manual = [c.metadata["nbgrader"]["points"] for c in notebook.cells
              if c.cell_type == "markdown" and c.metadata["nbgrader"].get("grade")]
    assert "| Part 1: Conceptual questions |  | 12 |" in title and manual == [3, 3, 3, 3]
    assert sum(points.values()) == 28  # the point split of the assignment: 12 by hand, 28 autograded


def test_pack_cell_is_last_and_skipped_while_grading():
    notebook = nbformat.read(SOLUTION, as_version=4)
    last = notebook.cells[-1]
    assert last.metadata["nbgrader"]["grade_id"] == "pack" and last.metadata["nbgrader"]["locked"]
    assert last.source.startswith("# ") and "if AUTOGRADING:" in last.source
    assert 'submission.pack("maxent_irl")' in last.source.split("else:", 1)[1]
    assert "run the last cell" in _cells_by_id(notebook)["title"].source


# --- numbers in the notebook's text come from its executed run --------------------------------

# A duration ("4.4 s") comes from a bench script, not from the executed run: the time-claim test in
# tests/test_notebooks.py checks that it names where it was measured.
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?!\.?\d)(?![A-Za-z_])(?!\s*(?:s\b|s/step|min\b|minutes?|seconds?|hours?))")


def _e1_table(executed) -> dict[int, tuple[float, float]]:
    rows = {}
    for line in _stdout(_cells_by_id(executed)["stability_demo"]).splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[0].isdigit():
            rows[int(parts[0])] = (float(parts[1]), float(parts[2]))
    return rows


def _claims(solution, executed) -> dict[tuple[str, str], tuple[str, float]]:
    """(grade_id, number as written in that markdown cell) -> (what it claims, the value it must round to)."""
    cells = _cells_by_id(executed)
    gap = re.search(r"largest feature-expectation gap (\d+\.\d+)", _stdout(cells["check_maxent_irl"]))
    assert gap, "the self-check cell did not print the feature gap"
    bound = re.search(r"assert max_feature_gap <= (\d+\.\d+)", _cells_by_id(solution)["check_maxent_irl"].source)
    table = _e1_table(executed)
    _, reward, _ = irl.setup_training_world()
    return {
        ("q4", "1.00"): ("E1 table: total visits of the plain pass on 13x13", table[13][0]),
        ("q4", "314.13"): ("E1 table: total visits of the log-space pass on 13x13", table[13][1]),
        ("world_intro", "0.65"): ("the true reward of state 8", float(reward[8])),
        ("todo4_intro", "0.85"): ("the bound the self-check asserts", float(bound.group(1))),
        ("todo4_intro", "0.81"): ("the gap the self-check printed", float(gap.group(1))),
        ("extension_intro", "2.4"): ("log(|A| e), the growth of log Z per sweep at omega = 1", math.log(4 * math.e)),
    }


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["maxent_irl"])
def test_every_number_in_the_text_matches_the_executed_run(executed_references, assignment):
    """Each decimal number in every paragraph of every markdown cell (model answers included) is a known
    claim, and equals, to the digits written, what the executed reference printed or what the code says."""
    executed = nbformat.read(executed_references.reference_dir(assignment) / f"{assignment}.ipynb", as_version=4)
    solution = nbformat.read(SOLUTION, as_version=4)
    claims = _claims(solution, executed)
    seen, problems = set(), []
    for cell in solution.cells:
        if cell.cell_type != "markdown":
            continue
        gid = cell.metadata["nbgrader"]["grade_id"]
        for match in DECIMAL.finditer(cell.source):
            key = (gid, match.group())
            seen.add(key)
            if key not in claims:
                problems.append(f"{gid}: the number {match.group()} has no check in _claims; add one")
                continue
            what, value = claims[key]
            decimals = len(match.group().split(".")[1])
            if round(value, decimals) != float(match.group()):
                problems.append(f"{gid}: says {match.group()} for {what}, the run gives {value:.{decimals + 2}f}")
    problems += [f"{gid}: no longer quotes {number}; drop its claim" for gid, number in set(claims) - seen]
    assert not problems, "\n".join(problems)

    # integers the text relies on
    text = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells if c.cell_type == "markdown"}
    world_out = _stdout(_cells_by_id(executed)["world_setup"])
    assert "We get to watch 200 of its walks" in text["title"] and "200 demonstrations" in world_out
    assert "(state 24, the only terminal state)" in text["world_intro"] and "at state 8" in text["world_intro"]
    _, reward, terminal = irl.setup_training_world()
    assert terminal.tolist() == [24] and np.flatnonzero(reward).tolist() == [8, 24]
    # E1 and the model answer of question 4: right up to 12x12, one visit in total from 13x13 on
    assert "from about $|S| = 13 \\times 13$" in text["extension_intro"] and "on the 13x13 world" in text["q4"]
    assert "\\approx 11" in text["extension_intro"] and round(4 * math.e) == 11
    assert "e^{709}" in text["extension_intro"] and math.floor(math.log(np.finfo(np.float64).max)) == 709
    table = _e1_table(executed)
    assert {12, 13} <= set(table), table
    plain, stable = table[12]
    assert abs(plain - stable) < 0.01, table[12]
    assert all(table[size][0] == 1.0 and table[size][1] > 100 for size in table if size >= 13), table


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["maxent_irl"])
def test_reference_run_packed_its_submission(executed_references, assignment):
    folder = executed_references.reference_dir(assignment)
    executed = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    # pack reads the notebook as last saved: here the copy the harness wrote before running it, so it says
    # exactly that (a student who saved after Run All gets "hand in this zip": tests/test_pack.py)
    printed = _stdout(_cells_by_id(executed)["pack"])
    assert f"{assignment}_submission.zip" in printed and "NOT ready to hand in yet (not run)" in printed, printed
    with zipfile.ZipFile(folder / f"{assignment}_submission.zip") as archive:
        assert archive.namelist() == [f"{assignment}.ipynb"]


def test_a_finished_notebook_without_the_optional_extension_is_ready(tmp_path):
    """Issue 42: TODOs 1 to 4 and the written answers done, the extension left as released: the demo cells of the
    extension say it is not written and the checker says "ready to submit"."""
    import nbformat
    from nbclient import NotebookClient

    from autograder.manifest import REPO_ROOT
    from helpers import submission

    release = nbformat.read(REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb", as_version=4)
    solution = nbformat.read(REPO_ROOT / "solutions" / "maxent_irl" / "maxent_irl.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: "\n".join(line for line in c.source.splitlines()
                                                             if "### BEGIN SOLUTION" not in line
                                                             and "### END SOLUTION" not in line)
               for c in solution.cells if c.metadata.get("nbgrader", {}).get("solution")}
    optional = {"svf_stable", "irl_trace"}
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers and grade_id not in optional:
            cell.source = answers[grade_id]
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(release, timeout=600, kernel_name="python3", resources=where).execute()
    path = tmp_path / "maxent_irl.ipynb"
    nbformat.write(release, path)
    report = submission.check_notebook(path, assignment="maxent_irl")
    assert report.ok, report.format()
    shown = "".join(o.get("text", "") for c in release.cells for o in c.get("outputs", []))
    assert "E1 (compute_expected_svf_stable) not written" in shown and "E2 (maxent_irl_trace) not written" in shown
