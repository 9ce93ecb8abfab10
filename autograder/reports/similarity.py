"""``python -m autograder similarity OUT``: pairs of submissions ranked by how much answer code they share.

For each assignment graded in OUT, every student's answer cells (the code cells with a TODO, as
formgrader's ``submitted/`` copy has them) become one text. copydetect (winnowing, as in MOSS;
https://github.com/blingenf/copydetect) fingerprints each text, leaving out what every student got:
the release's starter code of those cells (signatures, docstrings, comments, the ``# YOUR CODE HERE``
lines). Every pair of students, and each student against the reference solution, gets the share of
its tokens the other also has; pairs are ranked by the larger share.

Writes ``OUT/similarity/<assignment>/index.html`` (the ranking, a link per pair), a page per listed
pair with the matched regions highlighted side by side, and ``similarity.csv``. Staff only: it quotes
students' code and the reference. A high share is a reason to look, not a verdict (short TODOs leave
little room to differ).
"""
from __future__ import annotations

import csv
import html
import itertools
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

NOISE = 25
"""Shortest token sequence that counts as shared (copydetect's noise threshold ``k``)."""
GUARANTEE = 30
"""Any shared sequence this long is always found (copydetect's guarantee threshold: window k..)."""
REFERENCE = "(reference solution)"


@dataclass
class Pair:
    first: str
    second: str
    share: float
    """The larger of the two shares of tokens found in the other text."""
    shares: tuple[float, float]
    tokens: int
    """Shared tokens."""
    page: str = ""


def answer_text(notebook_path: Path) -> str:
    """The code answer cells of one notebook, in order, each under a line naming it."""
    notebook = nbformat.read(notebook_path, as_version=4)
    parts = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            parts.append(f"# --- {meta.get('grade_id')}\n{cell.source.rstrip()}\n")
    return "\n".join(parts)


def _fingerprint(text: str, boilerplate):
    from copydetect import CodeFingerprint

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(text)
    try:
        return CodeFingerprint(handle.name, NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate, language="python")
    finally:
        Path(handle.name).unlink()


def compare(texts: dict[str, str], starter: str) -> tuple[list[Pair], dict]:
    """Every pair of ``texts`` (name -> answer text), most similar first; and the fingerprints."""
    import numpy as np
    from copydetect import compare_files

    boilerplate = np.array(sorted(_fingerprint(starter, []).hashes)) if starter.strip() else []
    prints = {name: _fingerprint(text, boilerplate) for name, text in texts.items()}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        with warnings.catch_warnings():  # copydetect warns about every pair that shares nothing
            warnings.simplefilter("ignore")
            tokens, shares, _ = compare_files(prints[a], prints[b])
        shares = tuple(float(np.nan_to_num(s)) for s in shares)
        pairs.append(Pair(a, b, max(shares), shares, int(tokens)))
    pairs.sort(key=lambda p: (-p.share, -p.tokens, p.first, p.second))
    return pairs, prints


def _pair_page(pair: Pair, prints: dict) -> str:
    from copydetect import compare_files
    from copydetect.detector import highlight_overlap

    _, _, slices = compare_files(prints[pair.first], prints[pair.second])
    sides = []
    for name, cut in ((pair.first, slices[0]), (pair.second, slices[1])):
        marked, _ = highlight_overlap(prints[name].raw_code, cut, "<mark>", "</mark>", escape_html=True)
        sides.append(f"<td style='vertical-align:top'><h3>{html.escape(name)}</h3><pre>{marked}</pre></td>")
    title = f"{html.escape(pair.first)} and {html.escape(pair.second)}"
    return (f"<html><head><meta charset='utf-8'><title>{title}</title></head><body><h2>{title}: "
            f"{pair.shares[0]:.0%} / {pair.shares[1]:.0%} of their answer tokens shared ({pair.tokens} tokens)</h2>"
            f"<table><tr>{''.join(sides)}</tr></table></body></html>")


def _index(assignment: str, pairs: list[Pair], count: int, shown: int) -> str:
    rows = "".join(
        f"<tr><td>{i}</td><td>{html.escape(p.first)}</td><td>{html.escape(p.second)}</td><td>{p.share:.0%}</td>"
        f"<td>{p.shares[0]:.0%} / {p.shares[1]:.0%}</td><td>{p.tokens}</td>"
        f"<td>{f'<a href={html.escape(p.page)!r}>matched regions</a>' if p.page else ''}</td></tr>"
        for i, p in enumerate(pairs[:shown], start=1))
    return (f"<html><head><meta charset='utf-8'><title>similarity: {html.escape(assignment)}</title></head><body>"
            f"<h2>{html.escape(assignment)}: {count} submissions, pairs by shared answer code</h2>"
            "<p>The share of each side's answer tokens found in the other (copydetect, winnowing; the release's "
            "starter code left out). A high share is a reason to read both, not a verdict.</p>"
            "<table border=1 cellpadding=4><tr><th>#</th><th>student</th><th>student</th><th>share</th>"
            f"<th>each side</th><th>tokens</th><th></th></tr>{rows}</table></body></html>")


def report(out: Path, assignment: str, reference: Path | None = None, pages: int = 50) -> Path:
    """Write OUT/similarity/<assignment>/ for one assignment; returns its index page."""
    from autograder.reports.feedback import spreadsheet_safe

    out = Path(out)
    notebooks = sorted(out.glob(f"submitted/*/{assignment}/{assignment}.ipynb"))
    texts = {path.parent.parent.name: answer_text(path) for path in notebooks}
    if reference is not None and reference.exists():
        texts[REFERENCE] = answer_text(reference)
    release = out / "release" / assignment / f"{assignment}.ipynb"
    pairs, prints = compare(texts, answer_text(release) if release.exists() else "")
    folder = out / "similarity" / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("pair-*.html"):
        old.unlink()
    for number, pair in enumerate([p for p in pairs if p.tokens][:pages], start=1):
        pair.page = f"pair-{number:03d}.html"
        (folder / pair.page).write_text(_pair_page(pair, prints))
    with open(folder / "similarity.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "other", "share", "share_student", "share_other", "tokens"])
        for pair in pairs:
            writer.writerow(spreadsheet_safe([pair.first, pair.second, f"{pair.share:.4f}", f"{pair.shares[0]:.4f}",
                                              f"{pair.shares[1]:.4f}", pair.tokens]))
    index = folder / "index.html"
    index.write_text(_index(assignment, pairs, len(notebooks), max(pages, 100)))
    return index
