"""Every repository path README.md and docs/ name exists (issue 43): a renamed module leaves no stale pointer."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAMED = re.compile(r"`((?:autograder|helpers|solutions|tests|docs|tools|bench|notebooks|\.ci)/[^`\s]*)`")


def named_paths() -> list[tuple[str, str]]:
    found = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for match in NAMED.finditer(doc.read_text(encoding="utf-8")):
            path = match.group(1).rstrip(".,:;)").split("::")[0]
            if not any(mark in path for mark in "<>{}*") and "ID" not in path.split("/"):
                found.append((doc.name, path))
    return found


def test_every_path_the_docs_name_exists():
    assignments = [p for p in (REPO / "solutions").iterdir() if p.is_dir()]
    missing = [f"{doc}: {path}" for doc, path in named_paths()
               if not (REPO / path).exists() and not any((a / path).exists() for a in assignments)]
    assert len(named_paths()) > 30 and not missing, missing
