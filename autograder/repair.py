"""Rebuild a submitted notebook on the release's skeleton before nbgrader sees it.

Students delete, duplicate, retype and edit cells; some do it on purpose. nbgrader copes with
some of that (it overwrites locked cells from the gradebook) and fails on the rest. Here the
release decides the cell sequence, types and nbgrader metadata; the student's notebook only
contributes the sources of answer cells and the student's own extra cells (kept in place).
Every change is reported as a feedback line.
"""
from __future__ import annotations

import copy
import uuid

import nbformat


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _grade_id(cell):
    return _meta(cell).get("grade_id")


def _plain(cell):
    """A student's cell with any nbgrader metadata removed (it has no say in grading)."""
    cell = copy.deepcopy(cell)
    cell.get("metadata", {}).pop("nbgrader", None)
    return cell


def repair(submitted, release) -> tuple[object, list[str]]:
    """Return (notebook to grade, feedback lines describing what was repaired)."""
    notes: list[str] = []
    release_ids = [_grade_id(c) for c in release.cells if _grade_id(c)]
    known = set(release_ids)

    first: dict[str, object] = {}
    extras_after: dict[str | None, list] = {}
    anchor = None
    duplicates, unknown = [], []
    for cell in submitted.cells:
        grade_id = _grade_id(cell)
        if grade_id in known and grade_id not in first:
            first[grade_id] = cell
            anchor = grade_id
            continue
        if grade_id in known:
            duplicates.append(grade_id)
        elif grade_id:
            unknown.append(grade_id)
        extras_after.setdefault(anchor, []).append(_plain(cell))

    for grade_id in dict.fromkeys(duplicates):
        notes.append(f"cell {grade_id} appears more than once: the first copy is graded, later copies run as "
                     "ordinary cells")
    for grade_id in dict.fromkeys(unknown):
        notes.append(f"a cell claims the unknown grade id {grade_id!r}: it runs as an ordinary cell")

    cells = list(extras_after.get(None, []))
    for release_cell in release.cells:
        grade_id = _grade_id(release_cell)
        new = copy.deepcopy(release_cell)
        if grade_id:
            meta = _meta(release_cell)
            student = first.get(grade_id)
            if meta.get("solution"):
                if student is None:
                    notes.append(f"answer cell {grade_id} was deleted: graded as unanswered")
                else:
                    new.source = student.get("source", "")
                    if student.get("cell_type") != release_cell.cell_type:
                        notes.append(f"answer cell {grade_id} was changed to {student.get('cell_type')}: "
                                     f"graded as a {release_cell.cell_type} cell again")
                    elif release_cell.cell_type == "code":
                        new.outputs = []
            else:
                what = "test cell" if meta.get("grade") else "read-only cell"
                if student is None:
                    notes.append(f"{what} {grade_id} was deleted: restored from the release")
                elif student.get("cell_type") != release_cell.cell_type:
                    notes.append(f"{what} {grade_id} was changed to {student.get('cell_type')}: restored from the release")
                elif student.get("source", "") != release_cell.source:
                    notes.append(f"{what} {grade_id} was edited: the original was restored and run")
        if new.cell_type == "code":
            new.outputs = []
            new.execution_count = None
        cells.append(new)
        if grade_id:
            cells.extend(extras_after.get(grade_id, []))

    notebook = copy.deepcopy(release)
    notebook.cells = cells
    seen = set()
    for cell in notebook.cells:
        if notebook.nbformat_minor >= 5:
            if cell.get("id") in seen or not cell.get("id"):
                cell["id"] = uuid.uuid4().hex[:12]
            seen.add(cell["id"])
        else:
            cell.pop("id", None)
        if cell.cell_type == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    nbformat.validate(notebook)
    return notebook, notes
