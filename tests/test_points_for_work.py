"""Points only for work (docs/AUTHORING.md): no hidden test pays for what a kernel can know without the work.

A forger who read a hidden test's source knows every observation whose expected value is a constant: a
count, a flag, an error's name, zeros, a list of equal numbers. For every hidden test of every assignment
the check forges exactly those (the reference's own constant observations) and reports an error for every
other label: the judge must give nothing. A test that fails here pays for knowledge, not for work: make one
of its labels a value the student's functions compute on its inputs (see test_one_rollout, test_training).
"""
from __future__ import annotations

import json
import math

import pytest

from autograder.grading import hidden_tests
from autograder.manifest import load_assignments

ASSIGNMENTS = load_assignments()


def leaves(observation: dict) -> list:
    kind = observation.get("type")
    if kind == "array":
        return [("number", v) for v in observation.get("values", [])]
    if kind in ("list", "tuple"):
        return [leaf for item in observation.get("items", []) for leaf in leaves(item)]
    if kind == "dict":
        return [leaf for item in observation.get("items", {}).values() for leaf in leaves(item)]
    if kind in ("int", "float", "bool"):
        return [("number", observation.get("value"))]
    return [(kind, "error" if kind == "error" else json.dumps(observation, sort_keys=True))]


def knowable(observation: dict) -> bool:
    """A constant: one repeated whole number, flag, string or error (what reading the test tells a forger)."""
    found = leaves(observation)
    whole = all(kind != "number" or value is None or not math.isfinite(value) or float(value).is_integer()
                for kind, value in found)
    return whole and len({repr(leaf) for leaf in found}) <= 1


def forged(expected: dict) -> dict:
    error = {"type": "error", "error": "Forged", "message": "the forger could not know this value"}
    return {label: (value if knowable(value) else error) for label, value in expected.items()}


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_no_hidden_test_pays_for_values_a_kernel_can_know(assignment):
    expected = hidden_tests.read_expected(assignment.tests_dir).get("tests", {})
    paying = []
    for name, test in hidden_tests.load(assignment.tests_dir).items():
        if test.measured_by is not None:
            continue  # decided by the grader's own measurement: no kernel report is read
        verdict = hidden_tests.judge(test, {"observations": forged(expected.get(name, {}))}, expected.get(name), name)
        if verdict.score > 0:
            paying.append(name)
    assert not paying, f"{assignment.id}: these tests pay for constants a forger knows: {paying}"


def test_the_forgery_keeps_constants_and_hides_computed_values():
    assert knowable({"type": "int", "value": 1}) and knowable({"type": "error", "error": "ValueError"})
    assert knowable({"type": "array", "values": [0.0, 0.0, 0.0], "shape": [3]})
    assert not knowable({"type": "array", "values": [0.0, 1.0], "shape": [2]})
    assert not knowable({"type": "float", "value": 0.25})


# --- no kit helper answers a graded TODO -------------------------------------------------------------------------

HELPER_MODULES = ("grpo", "irl", "lm", "math_tasks", "math_answers", "tiny_grpo_tools", "toy_sort", "_logprobs",
                  "_fast_sampling")
"""The modules of ``helpers`` that compute (the others save, load, install or pack files: called with a TODO's
integers as paths they would open and close this process's own file descriptors)."""


class _Stop(Exception):
    pass


def recorded_calls(test) -> list:
    """(label, TODO name, args, kwargs) of each call the probe makes to a notebook function, found by running the
    probe against a notebook whose every function records its arguments and stops."""
    from autograder.kernel.probe import Notebook

    calls, current = [], [None]

    class Recording(dict):
        def __missing__(self, name):
            def record(*args, **kwargs):
                calls.append((current[0], name, args, kwargs))
                raise _Stop
            return record

    def observe(label, fn, *args, **kwargs):
        current[0] = label
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a probe step that needs a real answer stops here
            return None

    observe.value = observe.sketch = lambda label, value, *rest: value
    observe.nonce = 0
    module = {"__name__": f"recording_{test.name}"}
    exec(compile(test.kernel_source, test.name, "exec"), module)  # noqa: S102 - the kit's own hidden test
    try:
        module["probe"](Notebook(Recording()), observe)
    except Exception:  # noqa: BLE001 - what was recorded before the probe stopped is enough
        pass
    return [call for call in calls if call[0] is not None]


def helper_functions() -> list:
    import importlib
    import inspect

    found = []
    for name in HELPER_MODULES:
        module = importlib.import_module(f"helpers.{name}")
        found += [(f"helpers.{name}.{fn_name}", fn) for fn_name, fn in vars(module).items()
                  if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not fn_name.startswith("__")]
    return found


def _bindable(fn, args, kwargs) -> bool:
    import inspect

    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_no_helper_returns_a_graded_todos_answer_on_the_hidden_tests_inputs(assignment, tmp_path, monkeypatch):
    """Issue 40: a helper a student can import (the kit's log-prob gather, the lecture's update weights) must not
    give a graded TODO's expected value on the hidden test's own inputs."""
    import copy
    import warnings

    from autograder.compare import difference
    from autograder.kernel.probe import Observe

    monkeypatch.chdir(tmp_path)
    expected = hidden_tests.read_expected(assignment.tests_dir).get("tests", {})
    helpers_found, answered = helper_functions(), []
    for name, test in hidden_tests.load(assignment.tests_dir).items():
        if test.measured_by is not None or test.task_functions:
            continue
        for label, todo, args, kwargs in recorded_calls(test):
            want = expected.get(name, {}).get(label)
            if want is None or knowable(want):
                continue
            for helper, fn in helpers_found:
                if not _bindable(fn, args, kwargs):
                    continue
                try:
                    with warnings.catch_warnings(), hidden_tests.time_budget(10):
                        warnings.simplefilter("ignore")
                        got = Observe().plain(fn(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
                except BaseException:  # noqa: BLE001 - a helper that cannot take the TODO's inputs answers nothing
                    continue
                if difference(got, want) is None:
                    answered.append(f"{helper} answers {todo} ({name}: {label})")
    assert not answered, answered
