"""Points have one home: ``POINTS`` in each hidden test (Otter's way); everything else is derived.

A hidden test file says what it is worth: ``POINTS = 2``, or, for a test that several cells call
with their own grade id (``hidden_test("id", "test_x", "cell")``), ``POINTS = {"cell": 2, ...}``.
Written answers keep theirs in their answer cell's nbgrader metadata (they have no test file).
``autograder.authoring.points_table`` writes them into the notebook; the manifest derives the
reference's score from them.
"""
from __future__ import annotations

import ast
from pathlib import Path


class PointsError(ValueError):
    """A hidden test whose ``POINTS`` is missing or unusable; the message says which and how to fix it."""


def declared(test_file: Path) -> int | dict[str, int]:
    """The ``POINTS`` a hidden test file declares, read without importing it."""
    for node in ast.parse(test_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "POINTS" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                break
            if _whole(value) or (isinstance(value, dict) and value and all(
                    isinstance(k, str) and _whole(v) for k, v in value.items())):
                return value
            break
    raise PointsError(f"{test_file}: no usable POINTS; write `POINTS = 2` (a whole number >= 0) under its TODO "
                      "line, or a dict of grade id -> points for a test several cells call")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def test_points(tests_dir: Path) -> dict[str, int]:
    """grade id of each autograded cell -> its points, from every ``test_*.py`` of ``tests_dir``."""
    points: dict[str, int] = {}
    for path in sorted(Path(tests_dir).glob("test_*.py")):
        value = declared(path)
        points.update(value if isinstance(value, dict) else {path.stem: value})
    return points


def total(tests_dir: Path) -> int:
    """The autograded points of an assignment (what its reference must score)."""
    return sum(test_points(tests_dir).values()) if Path(tests_dir).is_dir() else 0
