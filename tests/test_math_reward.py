"""helpers.math_tasks: prompts, the r1_zero reward built on math_verify, and the tiny MATH set."""
from __future__ import annotations

import json
import os
import random
import threading

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from helpers import math_tasks as hm  # noqa: E402
from helpers import time_limits  # noqa: E402
from helpers.math_tasks import (  # noqa: E402
    extract_boxed_answer,
    format_r1_zero,
    load_math,
    load_prompt,
    r1_zero_reward_fn,
    r1_zero_sft_text,
)

ONE = {"format_reward": 1.0, "answer_reward": 1.0, "reward": 1.0}
FORMAT_ONLY = {"format_reward": 1.0, "answer_reward": 0.0, "reward": 0.0}
ZERO = {"format_reward": 0.0, "answer_reward": 0.0, "reward": 0.0}


def respond(answer: str, reasoning: str = "some steps") -> str:
    """A well-formed response to an r1_zero prompt (which already opened <think>)."""
    return f" {reasoning} </think> <answer> {answer} </answer>"


# --- prompts --------------------------------------------------------------------------


def test_prompts_load_with_placeholder():
    r1 = load_prompt("r1_zero")
    assert r1.startswith("A conversation between User and Assistant.")
    assert "User: {question}\nAssistant: <think>" in r1
    assert r1.endswith("Assistant: <think>")
    assert load_prompt("question_only") == "{question}"
    assert set(hm.available_prompts()) >= {"r1_zero", "question_only"}


def test_unknown_prompt_names_the_available_ones():
    with pytest.raises(ValueError, match="r1_zero") as info:
        load_prompt("nope")
    assert "question_only" in str(info.value)


def test_format_keeps_latex_braces():
    question = "What is $\\frac{1}{2} + \\frac{1}{4}$?"
    prompt = format_r1_zero(question)
    assert f"User: {question}\nAssistant: <think>" in prompt
    assert hm.format_prompt("question_only", question) == question


# --- answer equivalence ----------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, gold",
    [
        ("0.5", "\\frac{1}{2}"),
        ("\\frac{1}{2}", "0.5"),
        ("1/2", "\\boxed{\\frac{1}{2}}"),
        ("\\dfrac{1}{2}", "\\frac12"),
        ("\\boxed{3}", "3"),
        ("3", "\\boxed{3}"),
        ("x = 6", "6"),
        ("12", 12),
        ("-7", "-7"),
        ("2\\sqrt{2}", "\\sqrt{8}"),
        ("$\\frac{3}{4}$", "\\frac{3}{4}"),
    ],
)
def test_equivalent_answers_score_one(answer, gold):
    assert r1_zero_reward_fn(respond(answer), gold) == ONE


@pytest.mark.parametrize("answer, gold", [("4", "3"), ("\\frac{1}{3}", "0.5"), ("x+1", "x-1")])
def test_wrong_answers_keep_the_format_reward(answer, gold):
    assert r1_zero_reward_fn(respond(answer), gold) == FORMAT_ONLY


def test_boxed_content_is_preferred():
    response = respond("first I thought 5, but \\boxed{7}")
    assert r1_zero_reward_fn(response, "7") == ONE
    assert r1_zero_reward_fn(response, "5") == FORMAT_ONLY


def test_last_answer_tag_counts():
    response = " hmm </think> <answer> 4 </answer> wait, no: <answer> 5 </answer>"
    assert r1_zero_reward_fn(response, "5") == ONE
    assert r1_zero_reward_fn(response, "4") == FORMAT_ONLY


def test_list_of_acceptable_answers():
    assert r1_zero_reward_fn(respond("2"), ["1", "\\boxed{2}"]) == ONE
    assert r1_zero_reward_fn(respond("3"), ["1", "2"]) == FORMAT_ONLY


def test_lenient_mode_is_a_superset():
    for answer, gold in [("0.5", "\\frac{1}{2}"), ("4", "3")]:
        fast = r1_zero_reward_fn(respond(answer), gold)
        slow = r1_zero_reward_fn(respond(answer), gold, fast=False)
        assert slow["reward"] >= fast["reward"]


@pytest.mark.parametrize(
    "response",
    [
        "",
        "12",
        "<answer> 12 </answer>",  # no </think>
        " 12 </think><answer> 12 </answer>",  # the format asks for one space between tags
        " 12 </think> <answer> 12",  # never closed
        " </think> <answer> </answer>".replace("</answer>", "</answr>"),
        None,
        12,
        b" </think> <answer> 12 </answer>",
    ],
)
def test_unformatted_or_malformed_responses_score_zero(response):
    assert r1_zero_reward_fn(response, "12") == ZERO


@pytest.mark.parametrize("answer", ["", "{{{", "\\frac{", "\\boxed{", "}{)(", "\\sqrt", "$$"])
def test_malformed_answers_never_raise(answer):
    assert r1_zero_reward_fn(respond(answer), "12") == FORMAT_ONLY


@pytest.mark.parametrize("gold", [None, "", "\\boxed{", object()])
def test_malformed_gold_never_raises(gold):
    assert r1_zero_reward_fn(respond("12"), gold)["answer_reward"] == 0.0


def test_reward_from_a_worker_thread():
    results = {}

    def work():
        results["right"] = r1_zero_reward_fn(respond("0.25"), "\\frac{1}{4}")
        results["wrong"] = r1_zero_reward_fn(respond("0.3"), "\\frac{1}{4}")

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=30)
    assert results == {"right": ONE, "wrong": FORMAT_ONLY}


PATHOLOGICAL = {
    "nested_parens_20k": "(" * 10_000 + "1" + ")" * 10_000,
    "nested_fracs_30k": "\\frac{" * 3_000 + "1" + "}{2}" * 3_000,
    "tower": "9^{9^{9}}",
    "tower_without_braces": "9^9^9",
    "huge_power": "10^{100000000}",
    "huge_factorial": "10000000!",
    "huge_binomial": "\\binom{1000000}{500000}",
    "huge_rational_power": "\\frac{99999}{7}^{99999}",
    "nested_trig": "\\sin(\\cos(" * 5 + "x" + "))" * 5,
}


@pytest.mark.parametrize("where", ["main", "thread"])
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_answers_return_quickly(name, where):
    """Unscreened, several of these run for minutes inside sympy (measured): the screen or the
    reward's time budget ends them with format credit only (how fast: bench/, not here)."""
    response = respond(PATHOLOGICAL[name])
    out = {}
    if where == "main":
        out.update(r1_zero_reward_fn(response, "6"))
    else:
        thread = threading.Thread(target=lambda: out.update(r1_zero_reward_fn(response, "6")))
        thread.daemon = True
        thread.start()
        thread.join(timeout=120)  # a liveness bound far above the budget, not a speed check
        assert not thread.is_alive(), "the reward never returned from a worker thread"
    assert out == FORMAT_ONLY


_RELEASE = threading.Event()


def _stuck(*args, **kwargs):
    """Stands in for a comparison that never ends (until the test releases it)."""
    while not _RELEASE.wait(0.01):
        pass
    return True


@pytest.mark.parametrize("where", ["main", "thread"])
def test_time_budget_cuts_off_a_slow_comparison(monkeypatch, where):
    monkeypatch.setattr(hm, "_answers_match", _stuck)
    monkeypatch.setattr(hm, "REWARD_TIMEOUT_S", 0.2)
    _RELEASE.clear()
    out = {}
    if where == "main":
        if not time_limits.can_use_alarm():
            pytest.skip("SIGALRM exists only on POSIX main threads; the worker-thread path is tested separately")
        out.update(r1_zero_reward_fn(respond("7"), "7"))
    else:
        thread = threading.Thread(target=lambda: out.update(r1_zero_reward_fn(respond("7"), "7")))
        thread.daemon = True
        thread.start()
        thread.join(timeout=120)  # a liveness bound, not a speed check
    returned_while_stuck = dict(out)  # the comparison is still stuck: only the budget can have ended it
    _RELEASE.set()  # let an abandoned helper thread finish
    assert returned_while_stuck == FORMAT_ONLY


def test_time_budget_restores_an_outer_timer():
    if not time_limits.can_use_alarm():
        pytest.skip("SIGALRM exists only on POSIX main threads; the worker-thread path is tested separately")
    import signal

    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        r1_zero_reward_fn(respond("3"), "3")
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 90.0 < remaining <= 100.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


# --- boxed extraction ------------------------------------------------------------------


@pytest.mark.parametrize(
    "solution, expected",
    [
        ("So the answer is $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
        ("$\\boxed{1}$ then $\\boxed{2}$", "2"),
        ("first \\boxed{1}, finally \\fbox{9}", "9"),
        ("The set is $\\boxed{\\{1, 2\\}}$.", "\\{1, 2\\}"),
        ("hence $\\boxed 5$.", "5"),
        ("no box here", None),
        ("\\boxed{3", None),
        ("", None),
    ],
)
def test_extract_boxed_answer(solution, expected):
    assert extract_boxed_answer(solution) == expected


# --- tiny MATH fixtures ---------------------------------------------------------------


@pytest.mark.parametrize("name, n", [("math_tiny_train.jsonl", 2000), ("math_tiny_val.jsonl", 200)])
def test_tiny_fixtures_are_valid(name, n):
    path = hm.DATA_DIR / name
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == n
    for record in records:
        assert set(record) == {"problem", "solution", "answer", "level", "type"}
        assert record["problem"] and record["answer"]
        assert record["solution"].rstrip(".$").endswith(f"\\boxed{{{record['answer']}}}")
        assert extract_boxed_answer(record["solution"]) == record["answer"]


def test_tiny_splits_do_not_overlap():
    train = {r["problem"] for r in load_math("train", "tiny")}
    val = {r["problem"] for r in load_math("validation", "tiny")}
    assert len(val) == 200 and not train & val


def test_generator_is_deterministic():
    from tools import make_math_tiny  # the maintainer tool that wrote helpers/data/math_tiny_*.jsonl

    first = make_math_tiny.make_splits(seed=0)
    assert first == make_math_tiny.make_splits(seed=0)
    assert first != make_math_tiny.make_splits(seed=1)
    shipped = load_math("validation", "tiny")
    assert [r["problem"] for r in first[1]] == [r["problem"] for r in shipped]


def test_load_math_tiny():
    records = load_math("train", "tiny", limit=5)
    assert len(records) == 5
    for record in records:
        assert {"problem", "solution", "answer"} <= set(record)
    assert len(load_math("test", "tiny")) == 200
    with pytest.raises(ValueError, match="split"):
        load_math("dev", "tiny")
    with pytest.raises(ValueError, match="profile"):
        load_math("train", "huge")


def test_data_note_names_source_and_licence(monkeypatch):
    """Where the problems come from and on what terms: MATH's licence and use, the tiny set's provenance."""
    monkeypatch.delenv(hm.MATH_SOURCE_VARIABLE, raising=False)
    full = hm.data_note("full")
    assert "Hendrycks" in full and "MIT" in full and "this assignment only" in full
    assert hm.MATH_HUB_SOURCES[0][0] in full
    monkeypatch.setenv(hm.MATH_SOURCE_VARIABLE, "/data/math")
    assert "/data/math" in hm.data_note("full")
    tiny = hm.data_note("tiny")
    assert "synthetic" in tiny and "no MATH problem" in tiny


def test_sft_text_earns_full_reward():
    rng = random.Random(0)
    records = load_math("train", "tiny")
    sample = random.Random(1).sample(records, 60) + load_math("validation", "tiny", limit=20)
    for record in sample:
        prompt = format_r1_zero(record["problem"])
        text = r1_zero_sft_text(record, rng)
        assert text.startswith(prompt)
        assert text.endswith(f"</think> <answer> {record['answer']} </answer>")
        assert r1_zero_reward_fn(text[len(prompt) :], record["answer"]) == ONE
        assert r1_zero_reward_fn(text[len(prompt) :], record["solution"]) == ONE


def test_sft_text_depends_only_on_the_rng_seed():
    record = load_math("train", "tiny", limit=1)[0]
    texts = [r1_zero_sft_text(record, random.Random(3)) for _ in range(2)]
    assert texts[0] == texts[1]


def test_full_profile_reads_a_local_math_folder(tmp_path, monkeypatch):
    """An offline GPU machine (or a course mirror of MATH) points COURSE_MATH_SOURCE at JSONL files."""
    from helpers import math_tasks as course_math

    rows = [{"problem": "What is $1+1$?", "solution": "It is $\\boxed{2}$."}]
    (tmp_path / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setenv(course_math.MATH_SOURCE_VARIABLE, str(tmp_path))
    records = course_math.load_math("train", "full")
    assert records == [{"problem": "What is $1+1$?", "solution": "It is $\\boxed{2}$.", "answer": "2",
                        "level": "", "type": ""}]
    with pytest.raises(FileNotFoundError, match="test.jsonl"):
        course_math.load_math("validation", "full")


def test_missing_math_verify_is_an_error_with_the_install_line(monkeypatch):
    import sys

    from helpers.math_tasks import MissingDependencyError, r1_zero_reward_fn

    monkeypatch.setitem(sys.modules, "math_verify", None)  # what an environment without it looks like
    with pytest.raises(MissingDependencyError) as error:
        r1_zero_reward_fn(" 2 + 2 = 4 </think> <answer> 4 </answer>", "4")
    message = str(error.value)
    assert "\n" not in message and 'pip install "math-verify>=0.8"' in message
    with pytest.raises(ImportError):  # also for an unformatted answer: no run goes on without it
        r1_zero_reward_fn("no tags", "4")
    monkeypatch.undo()
    assert r1_zero_reward_fn(" 2 + 2 = 4 </think> <answer> 4 </answer>", "4")["reward"] == 1.0


# --- question_only reward (answers without tags) ------------------------------------------


@pytest.mark.parametrize("response, expected", [
    (" 3 + 4 = 7. So it is 7.", "7"),                                   # the tiny model's untagged slip
    ("We add them: $\\frac{1}{2}+\\frac{1}{4}=\\boxed{\\frac{3}{4}}$. Next question: 5", "\\frac{3}{4}"),
    (" x = 10 </think> <answer> 10 </answer> then 12", "10"),           # a tag wins over later numbers
    ("The answer is \\frac{7}{2}", "\\frac{7}{2}"),
    ("so x = -3.5", "-3.5"),
    ("it is 7/2.", "7/2"),
    ("no numbers here", None),
    (None, None),
])
def test_extract_untagged_answer(response, expected):
    assert hm.extract_untagged_answer(response) == expected


def test_question_only_reward_grades_answers_without_tags():
    assert hm.question_only_reward_fn(" 3 + 4 = 7. So it is 7.", "7") == ONE
    assert hm.question_only_reward_fn("Thus $x=\\boxed{0.5}$.", "\\frac{1}{2}") == ONE
    assert hm.question_only_reward_fn(" 10 </think> <answer> 10 </answer>", "10") == ONE
    assert hm.question_only_reward_fn("So it is 8.", "7") == FORMAT_ONLY
    assert hm.question_only_reward_fn("I do not know.", "7") == ZERO
    assert hm.question_only_reward_fn(12, "7") == ZERO
    # the same responses earn nothing from r1_zero_reward_fn: that is why the comparison needs this reward
    assert r1_zero_reward_fn(" 3 + 4 = 7. So it is 7.", "7")["reward"] == 0.0


def test_question_only_reward_is_bounded_for_costly_answers():
    assert hm.question_only_reward_fn("\\boxed{9^{9^{9}}}", "7") == FORMAT_ONLY


def test_question_only_reward_needs_math_verify(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(hm.MissingDependencyError, match="pip install"):
        hm.question_only_reward_fn("So it is 7.", "7")
