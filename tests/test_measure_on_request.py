"""A test that asks for a measurement while its notebook runs gets it from the grader's own evaluator pool.

The executor writes a request into the submission's state folder and waits; the grader's
``Desk`` answers from the pool (``autograder/grading/measure_on_request.py``). No executor starts an
evaluator of its own any more.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

from autograder.grading import measure_on_request
from autograder.grading.measure_on_request import Desk, ask
from autograder.manifest import REPO_ROOT


def test_the_desk_answers_what_the_executor_asks(tmp_path):
    asked = []

    def measure(test, inputs):
        asked.append((test, inputs))
        return {"base": ["1"], "tuned": ["2"], "error": None}

    with Desk(tmp_path, measure):
        answer = ask(tmp_path, "test_eval_improvement", {"prompts": ["p"], "max_new_tokens": 4}, time.time() + 30)
    assert answer["tuned"] == ["2"] and asked == [("test_eval_improvement", {"prompts": ["p"], "max_new_tokens": 4})]
    assert not list((tmp_path / measure_on_request.FOLDER).glob("*.request"))


def test_a_failing_measurement_is_one_line_and_no_desk_is_a_time_limit(tmp_path):
    def broken(test, inputs):
        raise OSError("disk full")

    with Desk(tmp_path, broken):
        answer = ask(tmp_path, "t", {}, time.time() + 30)
    assert answer == {"error": "the grader could not measure it (OSError)"}
    (tmp_path / "alone").mkdir()
    assert "time limit" in ask(tmp_path / "alone", "t", {}, time.time() + 0.3)["error"]


class _Counting:
    def __init__(self, runs):
        self.runs = runs

    def measure(self, artifact, rules, timeout, inputs=None):
        self.runs.append(inputs)
        return {"base": [], "tuned": [], "error": None, "inputs": inputs}


def test_the_pool_keeps_answers_per_artifact_and_inputs(tmp_path, monkeypatch):
    """A resubmitted adapter asked on the same prompts is measured once; other prompts are measured again."""
    from autograder.evaluators.pool import Pool

    runs = []
    monkeypatch.setattr(Pool, "_run", lambda self, spec, settings, gpu, ask, attempts=2: dict(ask(_Counting(runs))))
    (tmp_path / "s" / "adapter").mkdir(parents=True)
    (tmp_path / "s" / "adapter" / "w.bin").write_bytes(b"w")
    spec, settings = {"name": "greedy_answers", "artifact": "adapter", "timeout": 5}, SimpleNamespace(profile="tiny")
    pool = Pool(tmp_path / "scratch")
    one, two = {"prompts": ["a" * 4000] * 200, "max_new_tokens": 4}, {"prompts": ["b"], "max_new_tokens": 4}
    first = pool.measure(spec, tmp_path / "s", settings, None, one)["greedy_answers"]
    pool.measure(spec, tmp_path / "s", settings, None, one)
    other = pool.measure(spec, tmp_path / "s", settings, None, two)["greedy_answers"]
    assert runs == [one, two] and first["inputs"] == one and other["inputs"] == two
    assert max(len(str(key)) for key in pool.answers) < 2000  # a student's 800 KB of prompts is not kept per answer


def test_the_graders_process_reads_a_tests_evaluator_without_importing_it():
    from autograder import hidden_test_files

    test = hidden_test_files.load(REPO_ROOT / "solutions" / "tiny_grpo" / "tests")["test_eval_improvement"]
    assert test.constant("EVALUATE_WITH") == "greedy_answers"
    assert test.constant("ARTIFACT") == "artifacts/tiny_grpo_adapter" and test.constant("NOTHING") is None
    assert "module" not in vars(test)  # never imported


def test_evaluators_are_started_by_the_pool_alone():
    """One route: neither the executor nor nbgrader's config knows how to start an evaluator."""
    for path in sorted((REPO_ROOT / "autograder").rglob("*.py")):
        if path.name != "pool.py" and "calibrate" not in path.name:
            assert "EvaluatorProcess(" not in path.read_text(), path
    assert "ProbeExecute.evaluation" not in (REPO_ROOT / "autograder" / "nbconfig.py").read_text()
