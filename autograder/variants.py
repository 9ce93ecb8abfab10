"""Calibration variants: one Python file each, ``solutions/<id>/variants/<name>.py``.

A variant is the reference solution with one plausible mistake (``KIND = "wrong"``) or an
alternative the text allows (``KIND = "allowed"``); ``tests/test_mutations.py`` grades every one
and checks the points of every test cell. A file reads::

    \"\"\"Divides by the largest count instead of the total.\"\"\"     <- the description
    KIND = "wrong"
    EXPECTED = {"test_initial_probabilities": 0}                   <- points of the cells it changes
    PATCHES = [("initial_probabilities", "counts.sum()", "counts.max()")]   <- (answer cell, old, new)


    # answer cell: feature_expectation                             <- a whole answer cell, as a student
    def feature_expectation_from_trajectories(features, demos):    #    would write it (applied before
        ...                                                         #    the patches)

The header is read with ``ast.literal_eval``, never executed; the answer cells below it are real
code the linter reads (they use the notebook's globals, hence the file's ``noqa`` line).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class VariantError(ValueError):
    """A variant file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Patch:
    grade_id: str
    """The answer cell edited."""
    old: str
    """Text that occurs exactly once in the reference answer."""
    new: str
    """What replaces it."""


@dataclass(frozen=True)
class Variant:
    """A calibration submission: the reference with a plausible mistake, or an allowed alternative."""

    name: str
    kind: str
    """``wrong`` (must lose the points of the cells it targets) or ``allowed`` (keeps every point)."""
    description: str
    patches: tuple[Patch, ...]
    replace: Mapping[str, str]
    """grade_id -> a whole answer cell written differently (applied before ``patches``)."""
    expected: Mapping[str, float]
    """test cell grade_id -> points this variant must earn there."""

CELL_MARK = re.compile(r"^# answer cell: (\w+)\s*$", re.MULTILINE)
HEADER_NAMES = {"KIND", "EXPECTED", "PATCHES"}


def read_header(text: str, where: str) -> tuple[str, dict, dict[str, str]]:
    """(docstring, {NAME: literal} of the module-level assignments, {answer cell: source}) of a file
    in this format; the header is parsed, never executed."""
    parts = CELL_MARK.split(text)
    try:
        module = ast.parse(parts[0])
    except SyntaxError as error:
        raise VariantError(f"{where}: line {error.lineno}: {error.msg}") from None
    values = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                raise VariantError(f"{where}: {node.targets[0].id} must be a literal") from None
    cells = {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}
    return (ast.get_docstring(module) or "").strip(), values, cells


def read_variant(path: Path) -> Variant:
    where = str(path)
    description, header, replace = read_header(Path(path).read_text(encoding="utf-8"), where)
    unknown = sorted(set(header) - HEADER_NAMES)
    if unknown:
        raise VariantError(f"{where}: unknown setting {unknown[0]} (settings: {', '.join(sorted(HEADER_NAMES))})")
    if header.get("KIND") not in ("wrong", "allowed"):
        raise VariantError(f"{where}: KIND must be \"wrong\" or \"allowed\"")
    expected = header.get("EXPECTED", {})
    if not isinstance(expected, dict) or not all(isinstance(v, (int, float)) for v in expected.values()):
        raise VariantError(f"{where}: EXPECTED must map test cells to points")
    try:
        patches = tuple(Patch(cell, old, new) for cell, old, new in header.get("PATCHES", []))
    except (TypeError, ValueError):
        raise VariantError(f"{where}: PATCHES must be a list of (answer cell, old text, new text)") from None
    return Variant(name=Path(path).stem, kind=header["KIND"], description=description, patches=patches,
                   replace=replace, expected={k: float(v) for k, v in expected.items()})


def load_variants(folder: Path) -> tuple[Variant, ...]:
    """Every variant under ``folder`` (none when it does not exist), by name."""
    folder = Path(folder)
    return tuple(read_variant(p) for p in sorted(folder.glob("*.py"))) if folder.is_dir() else ()
