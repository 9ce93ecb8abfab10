"""Grades in Canvas's own import format: a copy of the instructor's gradebook export with our totals filled in.

    python -m autograder grades OUT --canvas-gradebook EXPORT.csv

Canvas imports a gradebook CSV only in the shape of its own export (``Student, ID, SIS User ID, SIS Login ID,
Section``, then one column per assignment named as in the export, a ``Points Possible`` row). This writes
``OUT/canvas_gradebook_import.csv``: the export, byte for byte where we change nothing, with each graded
assignment's column (the one whose header holds the assignment id, or ``--canvas-column``) set to our total for
the row whose ``ID`` is the student's Canvas user id as ``collect`` recorded it. Names never decide. Students it
could not match are listed.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from autograder.reports.feedback import total

OUTPUT = "canvas_gradebook_import.csv"


@dataclass
class Filled:
    path: Path
    columns: dict = field(default_factory=dict)
    """assignment -> the export's column it filled."""
    unmatched: list = field(default_factory=list)
    """Lines: our students with no row in the export, and assignments with no column."""


def _column(header: list[str], assignment: str, chosen: str | None) -> str | None:
    if chosen:
        return chosen if chosen in header else None
    found = [name for name in header[5:] if assignment.lower() in name.lower()]
    return found[0] if len(found) == 1 else None


def fill(out: Path, export: Path, column: str | None = None) -> Filled:
    """Write OUT/canvas_gradebook_import.csv from ``export``; ValueError (one line) for an export of another shape."""
    from autograder.reports.feedback import load_results
    from autograder.reports.grades import load_lms

    with open(export, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    if not rows or rows[0][:2] != ["Student", "ID"]:
        raise ValueError(f"{export} is not a Canvas gradebook export (its first columns must be Student, ID): export "
                         "it from Canvas (Gradebook, Export, Export Entire Gradebook)")
    header, lms = rows[0], load_lms(Path(out))
    done = Filled(Path(out) / OUTPUT)
    by_id = {row[1]: row for row in rows[1:] if len(row) > 1 and row[1].strip()}
    results = load_results(out)
    for assignment in sorted({r.assignment for r in results}):
        name = _column(header, assignment, column)
        if name is None:
            done.unmatched.append(f"{assignment}: no column of the export names it (columns: {', '.join(header[5:])});"
                                  " pass --canvas-column")
            continue
        done.columns[assignment] = name
        index = header.index(name)
        for result in (r for r in results if r.assignment == assignment):
            meta = lms.get(result.student, {})
            row = by_id.get(str(meta.get("user_id", ""))) if meta.get("lms") == "canvas" else None
            if row is None:
                done.unmatched.append(f"{result.student}/{assignment}: no row with Canvas ID "
                                      f"{meta.get('user_id') or '(none recorded)'} in the export")
                continue
            row.extend([""] * (index + 1 - len(row)))
            row[index] = f"{total(result)[0]:g}"
    with open(done.path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows[1:])  # Canvas's own rows, unchanged but for the totals
    return done
