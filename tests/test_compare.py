"""The one comparator of observed and expected values (autograder/compare.py)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from autograder.compare import difference
from autograder.kernel.probe import Observe


def seen(value):
    """What the kernel's probe reports for ``value``."""
    return Observe().plain(value)


def test_float64_is_judged_at_float64_precision():
    want = seen(np.array([1.0, -2.0, 3.0]))
    assert difference(seen(np.array([1.0, -2.0, 3.0 + 1e-7])), want) is None
    message = difference(seen(np.array([1.0, -2.0, 3.001])), want)
    assert message == "got 3.001 at index 2, expected 3 ± 3e-06 (float64)"


def test_a_float32_answer_is_judged_at_float32_precision():
    """A correct answer computed in float32 keeps its points against a float64 reference; a float32
    answer that is off by more than float32 rounding still fails."""
    want = seen(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64))
    assert difference(seen(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32)), want) is None
    assert difference(seen(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32) * (1 + 3e-5)), want) is None
    assert "float32" in difference(seen(torch.tensor([0.1, 0.2, 0.31], dtype=torch.float32)), want)
    # the same float32 rounding returned as float64 (computed in float32, then cast) is judged at float64
    assert difference(seen(torch.tensor([0.1, 0.2, 0.3]).double() * (1 + 3e-5)), want) is not None


def test_rounding_to_16_bits_buys_no_looser_check():
    want = seen(torch.tensor([1.0, 2.0]))  # float32 reference
    assert difference(seen(torch.tensor([1.0, 2.0], dtype=torch.bfloat16)), want) is None
    off_by_half_a_percent = torch.tensor([1.0, 2.01], dtype=torch.bfloat16)
    assert difference(seen(off_by_half_a_percent), want) is not None
    # where the reference itself is half precision, the half tolerance applies
    assert difference(seen(off_by_half_a_percent), seen(torch.tensor([1.0, 2.0], dtype=torch.bfloat16))) is None


def test_integers_and_booleans_are_exact():
    assert difference(seen(3), seen(3)) is None
    assert difference(seen(np.int64(4)), seen(3)) == "got 4, expected 3 (exact)"
    assert difference(seen(True), seen(True)) is None and difference(seen(False), seen(True)) is not None
    assert difference(seen(3.0), seen(3)) is None  # a float equal to the expected count


def test_the_tolerance_scales_with_the_largest_expected_value():
    want = seen(np.array([1000.0, 1e-3]))
    assert difference(seen(np.array([1000.0, 1e-3 + 5e-4])), want) is None  # 5e-4 < 1e-6 * 1000
    assert difference(seen(np.array([1000.0, 1e-3 + 5e-3])), want) is not None


def test_nan_and_infinity():
    assert difference(seen(float("nan")), seen(float("nan"))) is None
    assert difference(seen(float("nan")), seen(0.0)) is not None
    assert difference(seen(float("inf")), seen(float("inf"))) is None
    assert difference(seen(np.array([1.0, np.inf])), seen(np.array([1.0, 1e308]))) is not None


def test_shapes_must_match():
    assert difference(seen(np.zeros((3, 1))), seen(np.zeros(3))) == "shape (3, 1), expected (3,)"
    assert difference(seen(torch.zeros(1)), seen(torch.tensor(0.0))) == "shape (1,), expected ()"


def test_any_container_of_the_same_numbers_matches():
    """A list where the reference returned a tensor (or the other way round) is the same answer."""
    assert difference(seen([1.0, 0.0, 0.5]), seen(torch.tensor([1.0, 0.0, 0.5]))) is None
    assert difference(seen(torch.tensor([[1, 2], [3, 4]])), seen([[1, 2], [3, 4]])) is None
    assert difference(seen(torch.tensor([])), seen([])) is None


def test_an_error_matches_an_error_of_any_type():
    raised_value_error = {"type": "error", "error": "ValueError", "message": "bad length"}
    raised_runtime_error = {"type": "error", "error": "RuntimeError", "message": "shape '[-1, 2]' is invalid"}
    assert difference(raised_runtime_error, raised_value_error) is None
    assert difference(seen(np.zeros(2)), raised_value_error) == \
        "returned a numpy array of float64 (2,) instead of raising an error"
    assert difference(raised_value_error, seen(1.0)) == "raised ValueError: bad length"


def test_structures_name_the_item_that_differs():
    want = seen({"loss": torch.tensor(1.5), "texts": ["a", "b"], "n": 2})
    assert difference(seen({"loss": torch.tensor(1.5), "texts": ["a", "b"], "n": 2, "extra": 1}), want) is None
    assert difference(seen({"loss": torch.tensor(1.5), "texts": ["a", "c"], "n": 2}), want) == \
        "['texts']: item 1: got str 'c', expected str 'b'"
    assert difference(seen({"loss": torch.tensor(1.5)}), want) == "no key 'texts'"
    assert difference(seen("x"), seen(1.0)) == "returned str 'x', expected a number or an array"


def test_any_input_gives_a_line_never_an_error():
    """Observations come from a kernel a student controls: malformed ones are a mismatch."""
    rng = random.Random(0)
    atoms = [None, 1, -1.5, "x", [], {}, True, float("nan"), [1, "a"], {"type": 3}, {"type": "array"},
             {"type": "array", "values": "no", "shape": [2]}, {"type": "list", "items": [{"type": None}]},
             {"type": "dict", "items": []}, {"type": "error"}, {"type": "float", "value": "1.0"}]

    def build(depth):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(atoms)
        return rng.choice([lambda: [build(depth - 1) for _ in range(2)],
                           lambda: {"type": rng.choice(["list", "dict", "array", "float"]),
                                    "items": build(depth - 1), "values": build(depth - 1), "shape": build(depth - 1),
                                    "value": build(depth - 1)}])()

    expected = [seen(v) for v in (1.0, np.zeros((2, 2)), [1.0, 2.0], {"a": 1}, "s", None)]
    for _ in range(2000):
        forged = json.loads(json.dumps(build(4), allow_nan=True))
        for want in expected:
            result = difference(forged, want)
            assert result is None or isinstance(result, str)


@pytest.mark.parametrize("value", [np.float32(1.5), np.arange(3), torch.tensor([True, False]),
                                   torch.ones(2, dtype=torch.bfloat16), (1, "a"), {"k": [np.float64(2.0)]}])
def test_every_value_matches_itself(value):
    assert difference(seen(value), seen(value)) is None
