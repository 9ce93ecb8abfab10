"""Grader side only (never sent to the kernel): rules the judges apply to decoded observations, and
expected observations derived from the reference's for the other conventions the text allows."""
import copy
import math

from autograder.compare import difference


def flat(value) -> list:
    """The numbers of a decoded list, tensor or nested list, in order."""
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in flat(item)]
    return [value]


def numbers(value) -> list[float] | None:
    """The rewards of a decoded result as floats; None when one is not a finite number (a NaN passes no rule)."""
    found = flat(value)
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in found):
        return None
    return [float(x) for x in found]


def words(text) -> str:
    """Whitespace collapsed, as the rewards compare answers."""
    return " ".join(str(text).split())


def strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def rescaled(observation: dict, factors: list[float]) -> dict:
    """A copy of a number or array observation with row i times factors[i] (one factor: every value)."""
    scaled = copy.deepcopy(observation)
    values = scaled["values"] if scaled.get("type") == "array" else [scaled.get("value")]
    size = len(values) // len(factors)
    values = [v * factors[i // size] if isinstance(v, (int, float)) else v for i, v in enumerate(values)]
    if scaled.get("type") == "array":
        scaled["values"] = values
    else:
        scaled["value"] = float(values[0])
    return scaled


def replaced(observation: dict, value: float) -> dict:
    """A copy of a one-number observation holding ``value`` (same type and dtype)."""
    key, number = ("values", [value]) if observation.get("type") == "array" else ("value", value)
    return {**observation, key: number}


def matches(check, label: str, expected: dict) -> bool:
    found = check.raw(label)
    return isinstance(found, dict) and difference(found, expected) is None


def same_as(check, label: str, expected: dict) -> bool:
    """check.same(label) against ``expected`` instead of the reference's own observation."""
    saved = check.expected
    check.expected = {**saved, label: expected}
    try:
        return check.same(label)
    finally:
        check.expected = saved


def finite(values) -> bool:
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in values)


APART = ("expected_answer and get_reward run apart from your notebook and from any model, with the standard library "
         "only (Cell 3)")


def task_error(check, label: str) -> str:
    """"ValueError: ..." of the first call of the student's task function that raised under ``label``, or ""."""
    raw = check.raw(label) or {}
    items = raw.get("items", []) if raw.get("type") in ("list", "tuple") else [raw]
    for item in items:
        if isinstance(item, dict) and item.get("type") == "error":
            return f"{item.get('error')}: {item.get('message')}"[:300]
    return ""


def apart_failed(check, label: str, what: str) -> bool:
    """Fail the check with the error the task function raised apart from the notebook, if one did."""
    error = task_error(check, label)
    return bool(error) and not check.expect(False, f"{what} raised {error} ({APART})")
