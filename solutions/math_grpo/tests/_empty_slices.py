"""Grader side only (never sent to the kernel): a masked mean over a slice with no masked entry may be
NaN (0 / 0) or 0, as the docstring allows; every other entry is compared as usual."""
import math


def zeros_where_nan(found, want):
    """``found`` with each 0 read as NaN where the reference's value is NaN (an empty slice)."""
    if not (isinstance(found, dict) and isinstance(want, dict) and found.get("type") == want.get("type") == "array"):
        return found
    values, expected = found.get("values"), want.get("values")
    if not (isinstance(values, list) and isinstance(expected, list) and len(values) == len(expected)):
        return found
    empty = [isinstance(w, float) and math.isnan(w) for w in expected]
    return {**found, "values": [math.nan if e and g == 0 else g for g, e in zip(values, empty, strict=True)]}


def nan_or_zero_for_empty_slices(check) -> None:
    for label in check.expected:
        if isinstance(check.raw(label), dict):
            check.observed[label] = zeros_where_nan(check.raw(label), check.expected[label])
        check.same(label)
