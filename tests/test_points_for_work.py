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
