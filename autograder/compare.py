"""The one comparison of an observed value with the reference's; the tolerance follows the dtypes.

Observations are the plain JSON values ``autograder.kernel.probe`` reports (numbers, strings,
arrays with dtype and shape, lists, dicts, raised errors). :func:`difference` returns None when the
student's value matches the reference's, else one line saying what differs. Numbers are compared
with a tolerance set by the least precise floating type of the two values: a float32 answer is
judged at float32 precision, a float64 one at float64 precision. A value below float32 (float16,
bfloat16) counts as float32 unless the reference's own value is in half precision: rounding a
correct answer to 16 bits must not buy a looser check.
"""
from __future__ import annotations

import math

RTOL = {"float64": 1e-6, "float32": 1e-4, "half": 2e-2}
"""Relative tolerance, scaled by the largest magnitude in the reference's array."""
ATOL = {"float64": 1e-9, "float32": 1e-6, "half": 1e-3}
"""Absolute floor, for values that should be (nearly) zero."""
_ORDER = ("float64", "float32", "half")
_HALF = ("float16", "bfloat16")


def precision(observation: dict) -> str | None:
    """"float64", "float32", "half", or None for exact values (integers, booleans)."""
    kind = observation.get("type")
    if kind == "float":
        return "float64"
    if kind == "array":
        dtype = str(observation.get("dtype", ""))
        if dtype in _HALF:
            return "half"
        if dtype.startswith("float"):
            return "float32" if dtype == "float32" else "float64"
    if kind in ("list", "tuple"):
        found = [precision(item) for item in observation.get("items", []) if isinstance(item, dict)]
        return _loosest([p for p in found if p]) if any(found) else None
    return None


def _loosest(classes: list[str]) -> str | None:
    return max(classes, key=_ORDER.index) if classes else None


def tolerance_class(observed: dict, expected: dict) -> str | None:
    got, want = precision(observed), precision(expected)
    if got == "half" and want != "half":
        got = "float32"
    return _loosest([p for p in (got, want) if p])


MAX_DIMENSIONS = 8


def well_formed_array(values, shape) -> bool:
    """An array observation's values and shape agree: a short list of non-negative integer sizes whose product
    is the number of values (one value for a 0-d array). A forged report fails here before anything regroups it."""
    return (isinstance(values, list) and isinstance(shape, list) and len(shape) <= MAX_DIMENSIONS
            and all(type(size) is int and size >= 0 for size in shape) and math.prod(shape) == len(values))


def numeric(observation: dict):
    """(shape, flat values) of a number, an array or a rectangular list of numbers; else None."""
    kind = observation.get("type")
    if kind in ("int", "float", "bool"):
        return (), [observation.get("value")]
    if kind == "array":
        values = observation.get("values")
        shape = observation.get("shape")
        return (tuple(shape), values) if well_formed_array(values, shape) else None
    if kind in ("list", "tuple"):
        items = observation.get("items")
        if not isinstance(items, list):
            return None
        if not items:
            return (0,), []
        parts = [numeric(item) if isinstance(item, dict) else None for item in items]
        if any(p is None for p in parts) or len({p[0] for p in parts}) != 1:
            return None
        return (len(parts), *parts[0][0]), [v for p in parts for v in p[1]]
    return None


def describe(observation: dict) -> str:
    kind = observation.get("type")
    if kind == "error":
        message = str(observation.get("message", ""))[:200]
        return f"raised {observation.get('error')}" + (f": {message}" if message else "")
    if kind == "array":
        shape = tuple(observation.get("shape", []))
        return f"a {observation.get('library', '')} array of {observation.get('dtype')} {shape}"
    if kind in ("int", "float", "bool", "str", "none"):
        return f"{kind} {_show(observation.get('value'))}"
    if kind == "object":
        return f"an object of type {observation.get('class')}"
    return f"a {kind}"


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _number(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return float(bool(value)) if isinstance(value, bool) else None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _index(flat: int, shape: tuple) -> str:
    if not shape:
        return ""
    position = []
    for size in reversed(shape):
        position.append(flat % size if size else 0)
        flat //= size if size else 1
    return f" at index {tuple(reversed(position)) if len(shape) > 1 else position[0]}"


def _numbers_differ(got, want, tolerance: str | None) -> str | None:
    got_shape, got_values = got
    want_shape, want_values = want
    if tuple(got_shape) != tuple(want_shape) or len(got_values) != len(want_values):
        return f"shape {tuple(got_shape)}, expected {tuple(want_shape)}"
    finite = [abs(v) for v in (_number(w) for w in want_values) if v is not None and math.isfinite(v)]
    scale = max(finite, default=0.0)
    allowed = (RTOL[tolerance] * scale + ATOL[tolerance]) if tolerance else 0.0
    for i, (g, w) in enumerate(zip(got_values, want_values, strict=True)):
        g, w = _number(g), _number(w)
        if w is None or g is None:
            return f"a value that is not a number{_index(i, tuple(want_shape))}"
        if math.isnan(w) or math.isnan(g) or math.isinf(w) or math.isinf(g):
            if not (math.isnan(w) and math.isnan(g)) and g != w:
                return f"got {g:.6g}{_index(i, tuple(want_shape))}, expected {w:.6g}"
            continue
        if abs(g - w) > allowed:
            shown = f" ± {allowed:.1g}" if tolerance else ""
            return f"got {g:.6g}{_index(i, tuple(want_shape))}, expected {w:.6g}{shown} ({tolerance or 'exact'})"
    return None


def difference(observed, expected) -> str | None:
    """None when ``observed`` matches ``expected`` (both observations), else what differs.

    Total: any input (a forged or malformed observation included) gives a line, never an error."""
    try:
        return _difference(observed, expected, depth=0)
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError) as error:
        return f"an unreadable result ({type(error).__name__})"


def _difference(observed, expected, depth: int) -> str | None:
    if not isinstance(observed, dict) or not isinstance(expected, dict):
        return "an unreadable result"
    if depth > 12:
        return "a result nested too deeply"
    got_kind, want_kind = observed.get("type"), expected.get("type")
    if want_kind == "error" or got_kind == "error":
        if want_kind == got_kind:
            return None  # any error where the reference raised one: the message and type are the student's
        if got_kind == "error":
            return describe(observed)
        return f"returned {describe(observed)} instead of raising an error"
    got_num, want_num = numeric(observed), numeric(expected)
    if (want_num is not None and want_kind not in ("list", "tuple")) or (want_num is not None and got_num is not None):
        if got_num is None:
            return f"returned {describe(observed)}, expected a number or an array"
        return _numbers_differ(got_num, want_num, tolerance_class(observed, expected))
    return _structure_differs(observed, expected, depth)


def _structure_differs(observed: dict, expected: dict, depth: int) -> str | None:
    got_kind, want_kind = observed.get("type"), expected.get("type")
    sequence = ("list", "tuple")
    if want_kind in sequence:
        if got_kind not in sequence:
            return f"returned {describe(observed)}, expected a {want_kind}"
        got_items, want_items = observed.get("items", []), expected.get("items", [])
        if len(got_items) != len(want_items):
            return f"{len(got_items)} items, expected {len(want_items)}"
        for i, (g, w) in enumerate(zip(got_items, want_items, strict=True)):
            inner = _difference(g, w, depth + 1)
            if inner:
                return f"item {i}: {inner}"
        return None
    if want_kind == "dict":
        if got_kind != "dict":
            return f"returned {describe(observed)}, expected a dict"
        got_items, want_items = observed.get("items", {}), expected.get("items", {})
        for key, w in want_items.items():
            if key not in got_items:
                return f"no key {key!r}"
            inner = _difference(got_items[key], w, depth + 1)
            if inner:
                return f"[{key!r}]: {inner}"
        return None
    if want_kind == "object":
        return None if got_kind == "object" and observed.get("class") == expected.get("class") else \
            f"returned {describe(observed)}, expected an object of type {expected.get('class')}"
    if got_kind != want_kind or observed.get("value") != expected.get("value"):
        return f"got {describe(observed)}, expected {describe(expected)}"
    return None
