"""Points per autograded cell, from what nbgrader wrote and what the grader measured itself.

- Normally a cell scores the smaller of what the autograded notebook says (nbgrader's own rule:
  an error is 0, otherwise full points) and what the gradebook recorded: a notebook cannot talk
  either one up alone.
- A job killed at the hard time limit wrote neither: then the executor's ``progress.jsonl``
  (each test cell's score the moment it was known) decides, so earned points are kept.
- Tier cells of an evaluator score from the grader's measurement alone (``evaluators.apply_tiers``);
  with an artifact trained in the other profile they score 0.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from autograder.outcome import Result


def release_points(notebook) -> tuple[dict[str, float], float]:
    """({autograded cell: points}, written-answer points) of a release notebook."""
    cells, manual = {}, 0.0
    for cell in notebook.cells:
        if not is_grade(cell):
            continue
        meta = cell.metadata.nbgrader
        if cell.cell_type == "code":
            cells[meta["grade_id"]] = float(meta.get("points", 0))
        else:
            manual += float(meta.get("points", 0))
    return cells, manual


def notebook_scores(path: Path, points: dict[str, float]) -> dict[str, float]:
    """nbgrader's own rule (error -> 0, numeric result -> partial, else full) on the autograded file."""
    from nbgrader.utils import determine_grade

    scores = {}
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if grade_id in points and cell.cell_type == "code" and is_grade(cell):
            meta["points"] = points[grade_id]
            score, _ = determine_grade(cell)
            scores[grade_id] = float(score or 0.0)
    return scores


def progress_scores(state: Path) -> dict[str, float]:
    """What the executor recorded before the job was killed (later lines win)."""
    scores = {}
    try:
        for line in (Path(state) / "progress.jsonl").read_text().splitlines():
            entry = json.loads(line)
            scores[str(entry["grade_id"])] = float(entry["score"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return scores


def score_cells(result: Result, autograded: Path | None, record: dict | None, state: Path | None) -> None:
    """Set ``result.cells`` scores; never more than every source agrees on, never below 0."""
    points = {name: pair[1] for name, pair in result.cells.items()}
    if autograded is not None and autograded.exists():
        sources = [notebook_scores(autograded, points)]
        grades = (record or {}).get("grades", {})
        saved = {name: grades.get(f"{result.assignment}/{name}", {}).get("auto_score") for name in points}
        sources.append({name: float(v) for name, v in saved.items() if v is not None})
    else:
        sources = [progress_scores(state) if state is not None else {}]
    for name in points:
        candidates = [source.get(name, 0.0) if i == 0 else source[name]
                      for i, source in enumerate(sources) if i == 0 or name in source]
        result.cells[name][0] = max(0.0, min(min(candidates), points[name]))


def score_tier_cells(result: Result, declared: dict | None, record: dict | None, mismatch: str | None) -> set:
    """Tier cells score from the grader's measurement only; an artifact trained in the other
    profile earns none of them. Returns the tier cells' grade ids."""
    if not declared:
        return set()
    from autograder.evaluators import apply_tiers as apply_measured

    if mismatch:
        measured = result.measurements.setdefault(declared["name"], {})
        measured.update(rate=None, error="the adapter was trained in the other profile")
    return apply_measured(result, declared, record)


def total(result: Result) -> float:
    return sum(pair[0] for pair in result.cells.values())
