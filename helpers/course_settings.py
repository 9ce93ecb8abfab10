"""What the grader will apply to each assignment, as the course's manifests set it.

``helpers/data/grading.json`` is generated from ``solutions/<id>/manifest.json`` by
``python -m autograder generate`` (the kit's maintainers run it; ``generate --check`` fails when
it is stale), so a notebook prints the thresholds and limits it is graded by instead of a copy
of them. It holds no answer and no test: tiers, time limits, the artifacts to submit.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SETTINGS_FILE = Path(__file__).resolve().parent / "data" / "grading.json"


@cache
def _all() -> dict:
    return json.loads(SETTINGS_FILE.read_text(encoding="utf-8"))


def settings(assignment_id: str) -> dict:
    """Everything listed for ``assignment_id`` (KeyError with the known ids if none)."""
    known = _all()
    if assignment_id not in known:
        raise KeyError(f"no grading settings for {assignment_id!r} (known: {', '.join(sorted(known))})")
    return known[assignment_id]


def tiers(assignment_id: str, profile: str) -> dict[str, float]:
    """{tier test cell: threshold} the grader scores ``assignment_id`` by in ``profile``."""
    return dict(settings(assignment_id)["tiers"].get(profile, {}))


def required_artifacts(assignment_id: str) -> tuple[str, ...]:
    """Folders under ``artifacts/`` that must be handed in with the notebook."""
    return tuple(Path(path).relative_to("artifacts").as_posix() for path in settings(assignment_id)["artifacts"])
