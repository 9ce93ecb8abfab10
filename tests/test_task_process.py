"""autograder/grading/task_process.py: the student's task functions, run apart from the notebook and any model.

Issue 40: the kernel reported tiny_grpo's task (answers, rewards) and could report any self-consistent lists; an
answer defined as the submitted adapter's own output made the improvement test circular. Here the functions run
from the answer cells' source, in a fresh standard-library process, on the grader's inputs.
"""
from __future__ import annotations

import json

import pytest

from autograder.grading import hidden_tests
from autograder.grading.task_process import TaskRunner, task_source
from autograder.isolation.host_isolation import next_uid, probe
from autograder.kernel.probe import InProcess
from autograder.manifest import REPO_ROOT

TESTS = REPO_ROOT / "solutions" / "tiny_grpo" / "tests"
DATASET = '''import re
DIGITS = (3, 6) if CFG.prompt_style == "raw" else (3, 3)
print(make_prompts(3, seed=0))


def expected_answer(prompt: str) -> str:
    found = re.findall(r"Sort the digits: (\\d(?: \\d)*)", prompt)
    return " ".join(sorted(found[-1].split()))
'''
REWARD = '''%time
def get_reward(prompts, responses):
    return [1.0 if r.split() == expected_answer(p).split() else 0.0 for p, r in zip(prompts, responses)]
'''
SORT = "Sort the digits: 3 1 2\nSorted:"


def modes() -> list[tuple[str, int | None]]:
    found = [("none", None)]
    isolation = probe("auto")
    if isolation.mode in ("root", "user"):
        found.append((isolation.mode, next_uid() if isolation.mode == "root" else None))
    return found


def test_the_task_source_keeps_the_functions_and_imports_the_standard_library_they_name():
    source = task_source([DATASET, REWARD], ("expected_answer", "get_reward"))
    assert source.startswith("import re\n") and "def expected_answer" in source and "def get_reward" in source
    assert "CFG" not in source and "print(" not in source and "%time" not in source


@pytest.mark.parametrize("mode,uid", modes())
def test_the_functions_answer_the_graders_calls_in_a_process_of_their_own(mode, uid):
    runner = TaskRunner(task_source([DATASET, REWARD], ("expected_answer", "get_reward")), mode, uid)
    answers = runner.call("expected_answer", [(SORT,), ("not a sort",)])
    assert answers[0] == {"type": "str", "value": "1 2 3"} and answers[1]["error"] == "IndexError"
    rewards = runner.call("get_reward", [([SORT, SORT], [" 1 2 3\n", "3 1 2"])])
    assert hidden_tests.decode(rewards[0]) == [1.0, 0.0]


@pytest.mark.parametrize("mode,uid", modes())
def test_no_model_library_is_reachable_apart(mode, uid):
    """An answer defined through the model (the adapter's own greedy output) fails there with one line."""
    circular = "import torch\n\n\ndef expected_answer(prompt):\n    return prompt\n"
    found = TaskRunner(circular, mode, uid).call("expected_answer", [(SORT,)])
    assert found[0]["type"] == "error" and found[0]["error"] == "ModuleNotFoundError"


@pytest.mark.parametrize("mode,uid", modes())
def test_a_task_that_hangs_prints_or_forges_its_answer_line_gets_no_point(mode, uid, monkeypatch):
    from autograder.grading import task_process

    monkeypatch.setattr(task_process, "TIMEOUT_S", 3)
    hang = "def expected_answer(prompt):\n    while True:\n        pass\n"
    assert "did not finish" in TaskRunner(hang, mode, uid).call("expected_answer", [(SORT,)])[0]["message"]
    noisy = "def expected_answer(prompt):\n    print('{\"results\": []}')\n    return 'x'\n"
    assert TaskRunner(noisy, mode, uid).call("expected_answer", [(SORT,)]) == [{"type": "str", "value": "x"}]
    forged = ("import json, os, sys\nsys.__stdout__.write(json.dumps({'results': [{'type': 'array', "
              "'values': [1.0] * 9, 'shape': [1] * 9}]}) + '\\n')\nsys.__stdout__.flush()\nos._exit(0)\n")
    assert "could not be judged" in TaskRunner(forged, mode, uid).call("f", [()])[0]["message"]


def test_plain_nbgrader_calls_the_notebooks_own_functions():
    found = InProcess({"expected_answer": lambda p: p.upper()}).call("expected_answer", [("a",), (None,)])
    assert found[0]["value"] == "A" and found[1]["type"] == "error"


def _task_test(name: str):
    return hidden_tests.load(TESTS)[name]


def test_a_blank_task_earns_nothing_whatever_the_kernel_reports():
    """The forger's report: the reference's own observations of every task check (prompts, answers, rewards);
    the task cells are blank, so what the grader computes apart replaces them and every check fails."""
    expected = hidden_tests.read_expected(TESTS)["tests"]
    blank = TaskRunner(task_source(["def expected_answer(prompt):\n    raise NotImplementedError()\n",
                                    "def get_reward(prompts, responses):\n    raise NotImplementedError()\n"],
                                   ("expected_answer", "get_reward")))
    for name in ("test_dataset", "test_expected_answer", "test_reward", "test_sanity_table"):
        test = _task_test(name)
        report = {"observations": json.loads(json.dumps(expected[name]))}
        hidden_tests.observe_task(test, report, blank)
        verdict = hidden_tests.judge(test, report, expected[name], name)
        assert verdict.score == 0 and "NotImplementedError" in " ".join(verdict.failures), (name, verdict)


def test_the_evaluator_never_runs_on_a_task_the_judge_refuses():
    """A forged task of 5,000 long prompts (209 s of grader time before) is refused before any model loads."""
    test = _task_test("test_eval_improvement")
    module = test.module
    huge = {module.PROMPTS: ["Sort the digits: 1 2\nSorted:" * 400] * 5000, module.MAX_NEW: 16}
    long = {module.PROMPTS: ["x" * 5000] * 200, module.MAX_NEW: 16}
    greedy = {module.PROMPTS: ["p"] * 200, module.MAX_NEW: 10**6}
    for got in (huge, long, greedy):
        with pytest.raises(ValueError):
            module.evaluation_inputs(got)
        assert module.task_observations(got, None) == {}
    assert module.evaluation_inputs({module.PROMPTS: ["p"] * 200, module.MAX_NEW: 8})["max_new_tokens"] == 8
