"""No answer leaves the kit: every solution and hidden-test line, searched for in what is published."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import nbformat

LEAK_MIN_CHARS = 20
"""Solution / hidden-test lines shorter than this (``return x``, ``pass``) are not searched for."""

BLOCKS = (("### BEGIN SOLUTION", "### END SOLUTION"), ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"))

# --------------------------------------------------------------------------------------
# No answer leaves the kit
# --------------------------------------------------------------------------------------


REVIEWED_COMMON_LINES = frozenset({
    "torch.manual_seed(seed)",
    "rng = random.Random(seed)",
    "for record in records:",
    "optimizer.zero_grad(set_to_none=True)",
    "a, b = rng.randint(10, 99), rng.randint(1, 9)",
})
"""Lines that occur inside a solution or hidden-test block *and* in ``helpers/`` for reasons of
their own (seeding, a loop header, the addition task's number ranges that the tiny model's
warm-up also uses). Each was reviewed: none gives away
more than the handout says (the held-out prompts' phrasings and seed, TODO 1's distinctness,
``exclude`` and seeding are not among them). Add to this list only after the same review."""


def _block_lines(source: str) -> tuple[list[str], list[str]]:
    """(stripped lines inside protected blocks, stripped lines outside them) of one cell."""
    inside_lines, outside_lines = [], []
    inside = None
    for line in source.splitlines():
        marker = line.strip()
        begin = next((b for b, _ in BLOCKS if marker == b), None)
        if inside is None and begin is not None:
            inside = dict(BLOCKS)[begin]
        elif inside is not None and marker == inside:
            inside = None
        elif inside is not None:
            inside_lines.append(marker)
        else:
            outside_lines.append(marker)
    return inside_lines, outside_lines


def protected_lines(solutions: Path) -> dict[str, str]:
    """Every line (stripped, at least ``LEAK_MIN_CHARS`` long) inside a solution block or a
    hidden-test block of ``solutions/*/*.ipynb`` -> where it comes from.

    Left out: lines that also occur outside every block somewhere in ``solutions/`` (in the
    scaffolding students see anyway, e.g. the forward pass repeated in a stable variant), and
    ``REVIEWED_COMMON_LINES``. Occurrence means "is part of", as in :func:`find_leaks`."""
    found: dict[str, str] = {}
    public: set[str] = set()
    for path in sorted(Path(solutions).glob("*/*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for index, cell in enumerate(notebook.cells):
            inside, outside = _block_lines(cell.source)
            public.update(outside)
            kind = "hidden test" if "### BEGIN HIDDEN TESTS" in cell.source else "solution"
            for line in inside:
                if len(line) >= LEAK_MIN_CHARS:
                    found.setdefault(line, f"{path.parent.name}/{path.name} cell {index} ({kind})")
    for path in sorted(Path(solutions).glob("*/tests/*.py")):  # imports and decorators are anyone's
        for line in (raw.strip() for raw in path.read_text(encoding="utf-8").splitlines()):
            if len(line) >= LEAK_MIN_CHARS and not line.startswith(("import ", "from ", "@")):
                found.setdefault(line, f"{path.parent.parent.name}/tests/{path.name} (hidden test)")
    public_text = "\n".join(public)
    return {line: origin for line, origin in found.items()
            if line not in public_text and line not in REVIEWED_COMMON_LINES}


def _texts(name: str, data: bytes) -> list[str]:
    """The searchable texts of one file: its bytes as text, and for a notebook its cells."""
    text = data.decode("utf-8", errors="replace")
    texts = [text]
    if name.endswith(".ipynb"):
        try:
            notebook = nbformat.reads(text, as_version=4)
        except Exception:  # noqa: BLE001  (searched as plain text only)
            return texts
        for cell in notebook.cells:
            texts.append(cell.get("source", ""))
            for output in cell.get("outputs", []):
                texts.append(json.dumps(output, ensure_ascii=False))
    return texts


def find_leaks(folder: Path, lines: dict[str, str]) -> list[str]:
    """``'<file>: <origin>: <line>'`` for each protected line found in ``folder`` or in any
    wheel / zip inside it."""
    leaks = []

    def search(label: str, name: str, data: bytes) -> None:
        texts = _texts(name, data)
        for line, origin in lines.items():
            if any(line in text for text in texts):
                leaks.append(f"{label}: {origin}: {line}")

    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        label = str(path.relative_to(folder))
        if path.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    search(f"{label}!{member}", member, archive.read(member))
        else:
            search(label, path.name, path.read_bytes())
    return leaks
