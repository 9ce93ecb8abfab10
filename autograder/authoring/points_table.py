"""The notebook's points, generated from the hidden tests' ``POINTS`` (``autograder.points``).

``python -m autograder generate`` writes the graded cells' nbgrader ``points`` and the title's points
table (the lines from ``| part | autograded | by hand |`` to the first blank line, in whichever
markdown cell holds that line; a notebook without that line has no table). ``generate --check``
names each that disagrees, and each heading or "How it is graded (N points)" line whose number no
longer matches the cells under it (those are prose: an author fixes them by hand).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.points import PointsError, test_points

TABLE_HEADER = "| part | autograded | by hand |"
_HEADING = re.compile(r"^(#{1,3}) (?!BEGIN SOLUTION|END SOLUTION)(.+)$", re.MULTILINE)
_POINTS_IN_HEADING = re.compile(r"\((?:[^()]*?, )?(\d+(?: \+ \d+)*) points?(?:, \d+ each)?\)")
_PARENTHETICAL = re.compile(r" \([^()]*(?:point|graded)[^()]*\)")
_HOW_GRADED = re.compile(r"How it is graded \((\d+) points?\)")


@dataclass
class Section:
    """The graded cells under one heading (level 1-3) of a notebook."""

    title: str
    level: int
    autograded: int = 0
    by_hand: int = 0


def _graded(cell) -> tuple[str, bool] | None:
    """(grade id, autograded?) of a graded cell, else None."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if not meta.get("grade"):
        return None
    return meta.get("grade_id", ""), cell.cell_type == "code" and not meta.get("solution")


def _test_of(cell, tests: dict[str, int]) -> str:
    """The grade id whose POINTS a graded code cell takes: its own, or the test it calls."""
    from autograder.hidden_test_files import HIDDEN_CALL

    meta = cell.metadata["nbgrader"]
    found = HIDDEN_CALL.search(cell.source)
    if found and found.group("cell"):
        return found.group("cell")
    return meta.get("grade_id") if meta.get("grade_id") in tests else (found.group("test") if found else "")


def sections(notebook) -> list[Section]:
    """Each heading of the notebook with the points of the graded cells it covers directly."""
    found: list[Section] = [Section("", 0)]
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            found += [Section(m.group(2).strip(), len(m.group(1))) for m in _HEADING.finditer(cell.source)]
        graded = _graded(cell)
        if graded:
            points = cell.metadata["nbgrader"].get("points", 0)
            if graded[1]:
                found[-1].autograded += points
            else:
                found[-1].by_hand += points
    return found


def table(notebook) -> str:
    """The title's points table: one row per heading with graded cells, then the totals."""
    rows = [TABLE_HEADER, "| --- | ---: | ---: |"]
    auto = hand = 0
    for section in sections(notebook):
        if section.autograded or section.by_hand:
            label = _PARENTHETICAL.sub("", section.title) or "(before the first heading)"
            rows.append(f"| {label} | {section.autograded or ''} | {section.by_hand or ''} |")
            auto, hand = auto + section.autograded, hand + section.by_hand
    rows.append(f"| **total: {auto + hand}** | **{auto}** | **{hand}** |")
    return "\n".join(rows)


def _replace_table(source: str, fresh: str) -> str | None:
    """``source`` with its points table replaced by ``fresh``; None when it has none."""
    start = source.find(TABLE_HEADER)
    if start < 0:
        return None
    end = source.find("\n\n", start)
    return source[:start] + fresh + (source[end:] if end >= 0 else "")


def heading_problems(notebook) -> list[str]:
    """Headings and "How it is graded (N points)" lines whose number is not what their cells carry.

    A heading's number counts the autograded cells under it (its subsections included), or its written
    answers where it has no test."""
    problems, found = [], sections(notebook)
    for index, section in enumerate(found):
        stated = _POINTS_IN_HEADING.findall(section.title)
        if not stated:
            continue
        said = sum(int(n) for group in stated for n in group.split(" + "))
        below = [section]
        for other in found[index + 1:]:
            if other.level <= section.level:
                break
            below.append(other)
        carried = sum(s.autograded for s in below) or sum(s.by_hand for s in below)
        if said != carried:
            problems.append(f"heading {section.title!r} says {said} points; its cells carry {carried}")
    return problems + _how_graded_problems(notebook)


def _how_graded_problems(notebook) -> list[str]:
    problems, said = [], None
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and (found := _HOW_GRADED.search(cell.source)):
            said = int(found.group(1))
        graded = _graded(cell)
        if graded and not graded[1] and said is not None:
            points = cell.metadata["nbgrader"].get("points", 0)
            if points != said:
                problems.append(f"{graded[0]}: its question says \"How it is graded ({said} points)\"; "
                                f"the answer cell carries {points}")
            said = None
    return problems


def sync(notebook, tests_dir: Path) -> list[str]:
    """Write POINTS into the notebook's autograded cells and its title table; return what changed."""
    tests = test_points(tests_dir)
    changed, used = [], set()
    for cell in notebook.cells:
        graded = _graded(cell)
        if not graded or not graded[1]:
            continue
        key = _test_of(cell, tests)
        if key not in tests:
            raise PointsError(f"{graded[0]}: no POINTS for it in {tests_dir} (its hidden test declares them)")
        used.add(key)
        if cell.metadata["nbgrader"].get("points") != tests[key]:
            changed.append(f"{graded[0]}: {cell.metadata['nbgrader'].get('points')} points -> {tests[key]}")
            cell.metadata["nbgrader"]["points"] = tests[key]
    unused = sorted(set(tests) - used)
    if unused:
        raise PointsError(f"{tests_dir}: POINTS for {', '.join(unused)}, which no graded cell calls")
    title = next((c for c in notebook.cells if c.cell_type == "markdown" and TABLE_HEADER in c.source), None)
    fresh = _replace_table(title.source, table(notebook)) if title is not None else None
    if title is not None and fresh != title.source:
        changed.append("the title's points table")
        title.source = fresh
    return changed


def sync_points(assignments, check: bool) -> list[str]:
    """For each assignment: sync its notebook from POINTS (or, with ``check``, name what is stale), then
    name headings whose numbers disagree. An unusable POINTS raises :class:`PointsError`."""
    stale = []
    for assignment in assignments:
        notebook = nbformat.read(assignment.source, as_version=4)
        changed = sync(notebook, assignment.tests_dir)
        if changed and check:
            stale += [f"{assignment.source}: {line} (from the hidden tests' POINTS)" for line in changed]
        elif changed:
            nbformat.write(notebook, assignment.source)
        stale += [f"{assignment.source}: {line}" for line in heading_problems(notebook)]
    return stale
