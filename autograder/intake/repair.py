"""Rebuild a submitted notebook on the release's skeleton before nbgrader sees it.

Students delete, duplicate, retype and edit cells; some do it on purpose. nbgrader copes with
some of that (it overwrites locked cells from the gradebook) and fails on the rest. Here the
release decides the cell sequence, types and nbgrader metadata; the student's notebook only
contributes the sources of answer cells and the student's own extra cells (kept in place).
Every change is reported as a feedback line.
"""
from __future__ import annotations

import ast
import copy
import uuid

import nbformat
from nbgrader.utils import is_grade, is_solution

STUB = "YOUR ANSWER HERE"


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _grade_id(cell):
    return _meta(cell).get("grade_id")


def _plain(cell):
    """A student's cell with any nbgrader metadata removed (it has no say in grading)."""
    cell = copy.deepcopy(cell)
    cell.get("metadata", {}).pop("nbgrader", None)
    return cell


def _defined_names(source: str) -> set[str]:
    """Top-level def/class names of a code cell (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _words(text: str) -> str:
    return " ".join(text.replace(STUB, " ").split())


def match_by_content(submitted, release, known: set) -> dict[int, tuple[str, str]]:
    """index of a submitted cell without a grade id -> (answer cell's grade id, how it was matched).

    For an answer pasted into a fresh notebook: a code cell that defines every function/class the
    release's answer cell defines; a markdown cell that repeats the question of a written answer
    (or follows a cell that does) and adds text."""
    present = {_grade_id(c) for c in submitted.cells if _grade_id(c) in known}
    free = [i for i, c in enumerate(submitted.cells) if _grade_id(c) not in known]
    matched: dict[int, tuple[str, str]] = {}
    for index, cell in enumerate(release.cells):
        grade_id = _grade_id(cell)
        if not is_solution(cell) or grade_id in present:
            continue
        if cell.cell_type == "code":
            names = _defined_names(cell.source)
            if not names:
                continue
            hits = [i for i in free if i not in matched and submitted.cells[i].cell_type == "code"
                    and names <= _defined_names(submitted.cells[i].get("source", ""))]
            if hits:
                matched[hits[-1]] = (grade_id, f"it defines {', '.join(sorted(names))}")
        elif cell.cell_type == "markdown":
            prompt = _words(cell.source)
            previous = release.cells[index - 1] if index else None
            before = _words(previous.source) if previous is not None and previous.cell_type == "markdown" else ""
            for i in free:
                if i in matched or submitted.cells[i].cell_type != "markdown":
                    continue
                text = _words(submitted.cells[i].get("source", ""))
                if len(prompt) >= 10 and prompt in text and text != prompt:
                    matched[i] = (grade_id, "it repeats the question")
                    break
                if before and len(before) >= 10 and i + 1 < len(submitted.cells) and text == before \
                        and submitted.cells[i + 1].cell_type == "markdown" and i + 1 in free and i + 1 not in matched:
                    matched[i + 1] = (grade_id, "it follows the question")
                    break
    return matched


def repair(submitted, release) -> tuple[object, list[str]]:
    """Return (notebook to grade, feedback lines describing what was repaired)."""
    notes: list[str] = []
    known = {_grade_id(c) for c in release.cells if _grade_id(c)}
    pasted = match_by_content(submitted, release, known)
    for _index, (grade_id, how) in sorted(pasted.items()):
        notes.append(f"answer cell {grade_id} had no grading metadata (pasted into another notebook?): matched "
                     f"by its content ({how}) and graded")
    first, extras_after = _sort_submitted(submitted, known, pasted, notes)
    cells = list(extras_after.get(None, []))
    for release_cell in release.cells:
        grade_id = _grade_id(release_cell)
        cells.append(_rebuilt(release_cell, first.get(grade_id), notes) if grade_id else _cleared(release_cell))
        if grade_id:
            cells.extend(extras_after.get(grade_id, []))
    notebook = copy.deepcopy(release)
    notebook.cells = cells
    _cap_attachments(notebook.cells, notes)
    _normalise(notebook)
    nbformat.validate(notebook)
    return notebook, notes


MAX_ATTACHMENT_CHARS = 3_000_000
"""One pasted image's base64 text (about 2.2 MB of image): a figure, not a photo album."""
MAX_ATTACHMENTS_CHARS = 12_000_000
"""All pasted images of one notebook: every page that shows the notebook carries them."""


def _cap_attachments(cells: list, notes: list[str]) -> None:
    """Pasted images past the limits are dropped (the page shows their alt text), with one line."""
    used, dropped = 0, []
    for cell in cells:
        attachments = cell.get("attachments") if cell.get("cell_type") == "markdown" else None
        if not isinstance(attachments, dict):
            continue
        for name in list(attachments):
            size = sum(len(text) for text in attachments[name].values())
            if size > MAX_ATTACHMENT_CHARS or used + size > MAX_ATTACHMENTS_CHARS:
                dropped.append(f"{name} ({size * 3 / 4 / 1e6:.1f} MB)")
                del attachments[name]
            else:
                used += size
        if not attachments:
            del cell["attachments"]
    if dropped:
        notes.append(f"{len(dropped)} image(s) pasted into written answers were too large to keep "
                     f"({', '.join(dropped[:5])}{' ...' if len(dropped) > 5 else ''}; at most "
                     f"{MAX_ATTACHMENT_CHARS * 3 / 4 / 1e6:.1f} MB each and {MAX_ATTACHMENTS_CHARS * 3 / 4 / 1e6:.0f} "
                     "MB in all): their alt text is shown instead; link to large figures")


def _sort_submitted(submitted, known: set, pasted: dict, notes: list[str]) -> tuple[dict, dict]:
    """({grade id: the student's first cell with it}, {grade id or None: the student's own cells after it})."""
    first: dict[str, object] = {}
    extras_after: dict[str | None, list] = {}
    anchor = None
    duplicates, unknown = [], []
    for position, cell in enumerate(submitted.cells):
        grade_id = pasted[position][0] if position in pasted else _grade_id(cell)
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
    return first, extras_after


def _rebuilt(release_cell, student, notes: list[str]):
    """The release's cell with the student's answer in it (answer cells) or as released (all others)."""
    grade_id = _grade_id(release_cell)
    new = copy.deepcopy(release_cell)
    if is_solution(release_cell):
        if student is None:
            notes.append(f"answer cell {grade_id} was deleted: graded as unanswered")
        else:
            new.source = student.get("source", "")
            _keep_attachments(new, student, notes)
            if student.get("cell_type") != release_cell.cell_type:
                notes.append(f"answer cell {grade_id} was changed to {student.get('cell_type')}: "
                             f"graded as a {release_cell.cell_type} cell again")
    else:
        what = "test cell" if is_grade(release_cell) else "read-only cell"
        if student is None:
            notes.append(f"{what} {grade_id} was deleted: restored from the release")
        elif student.get("cell_type") != release_cell.cell_type:
            notes.append(f"{what} {grade_id} was changed to {student.get('cell_type')}: "
                         "restored from the release")
        elif student.get("source", "") != release_cell.source:
            notes.append(f"{what} {grade_id} was edited: the original was restored and run")
    return _cleared(new)


def _keep_attachments(new, student, notes: list[str]) -> None:
    """A written answer's pasted images (``attachments``: name -> {mime type: base64 text}) go with
    its source, so formgrader shows them; anything else under that key is dropped with a note."""
    found = student.get("attachments")
    if not found or new.cell_type != "markdown" or student.get("cell_type") != "markdown":
        return
    if _well_formed(found):
        new["attachments"] = copy.deepcopy(found)
    else:
        notes.append(f"answer cell {_grade_id(new)}: its attachments are not valid notebook attachments: dropped")


def _well_formed(attachments) -> bool:
    """nbformat's shape: {file name: {mime type: base64 text, ...}}, no entry empty."""
    if not isinstance(attachments, dict):
        return False
    return all(isinstance(name, str) and isinstance(data, dict) and data
               and all(isinstance(mime, str) and isinstance(text, str) for mime, text in data.items())
               for name, data in attachments.items())


def _cleared(cell):
    """A copy of a cell as it is before running: a code cell has no outputs and no count."""
    cell = copy.deepcopy(cell)
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    return cell


def _normalise(notebook) -> None:
    """Unique cell ids (nbformat 4.5+), and outputs only on code cells, so the result validates."""
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
