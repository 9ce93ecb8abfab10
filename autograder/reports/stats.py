"""Per-question statistics after a batch: which test cell most students fail, and which one looks wrong.

    python -m autograder stats OUT

For each assignment graded in OUT (its ``feedback/<student>/<assignment>/result.json`` files) it writes
``OUT/stats/<assignment>/index.html`` (plots as inline SVG: it opens offline) and ``stats.csv`` beside it, one
row per graded cell: ``cell, points, pass_rate, flagged``. A cell is *flagged* ("check this test") when at
least a quarter of the strong submissions fail it, a strong submission being one that earns at least 80 % of
the other autograded points: a test that students who do everything else right still fail is how a wrong
hidden test shows itself in a real term. Identical failure messages of a cell are grouped, so the staff
read a cluster once.
"""
from __future__ import annotations

import csv
import html
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.outcome import Result
from autograder.reports.offline_math import with_mathml

STRONG_SHARE = 0.8
"""A submission is strong on a cell when it earns at least this share of the other autograded points."""
FLAG_SHARE = 0.25
"""A cell is flagged when at least this share of its strong submissions fail it."""


@dataclass
class CellStats:
    cell: str
    points: float
    passed: int = 0
    graded: int = 0
    strong: int = 0
    strong_failed: int = 0
    messages: Counter = field(default_factory=Counter)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0

    @property
    def flagged(self) -> bool:
        return self.strong >= 4 and self.strong_failed >= FLAG_SHARE * self.strong


def cell_stats(results: list[Result]) -> list[CellStats]:
    """One entry per autograded cell of the assignment, in the notebook's order (the first result's)."""
    order = list(dict.fromkeys(cell for r in results for cell in r.cells))
    found = {cell: CellStats(cell, max(float(r.cells[cell][1]) for r in results if cell in r.cells)) for cell in order}
    for result in results:
        total, available = result.score, result.max_score
        for cell, (earned, points) in result.cells.items():
            entry = found[cell]
            entry.graded += 1
            passed = float(earned) >= float(points) > 0 or float(points) == 0
            entry.passed += passed
            others = available - float(points)
            if others > 0 and (total - float(earned)) >= STRONG_SHARE * others:
                entry.strong += 1
                entry.strong_failed += not passed
            if not passed:
                entry.messages[result.cell_messages.get(cell) or "(no message: the cell did not run)"] += 1
    return list(found.values())


def _svg(draw) -> str:
    """An inline SVG of the matplotlib figure ``draw(ax)`` makes (no file, no network)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    draw(ax)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _plots(results: list[Result], cells: list[CellStats]) -> list[tuple[str, str]]:
    scores = [r.score for r in results]
    statuses = Counter(r.status for r in results)
    late = Counter("late" if r.late else "on time" for r in results)
    return [
        ("Autograded score", _svg(lambda ax: (ax.hist(scores, bins=min(20, max(5, len(set(scores))))),
                                              ax.set_xlabel("points"), ax.set_ylabel("submissions")))),
        ("Pass rate per graded cell", _svg(lambda ax: (ax.barh([c.cell for c in cells][::-1],
                                                               [c.pass_rate for c in cells][::-1],
                                                               color=["#c0392b" if c.flagged else "#2e86c1"
                                                                      for c in cells][::-1]),
                                                       ax.set_xlim(0, 1), ax.set_xlabel("share passing"),
                                                       ax.tick_params(axis="y", labelsize=6)))),
        ("Seconds per submission", _svg(lambda ax: (ax.hist([r.seconds for r in results], bins=15),
                                                    ax.set_xlabel("seconds"), ax.set_ylabel("submissions")))),
        ("Statuses and lateness", _svg(lambda ax: ax.bar([*statuses, *late], [*statuses.values(), *late.values()]))),
    ]


def _page(assignment: str, results: list[Result], cells: list[CellStats]) -> str:
    esc = html.escape
    flagged = [c for c in cells if c.flagged]
    rows = "".join(
        f"<tr{' class=flag' if c.flagged else ''}><td>{esc(c.cell)}</td><td>{c.points:g}</td>"
        f"<td>{c.pass_rate:.0%}</td><td>{c.strong_failed} of {c.strong}</td>"
        f"<td>{'check this test' if c.flagged else ''}</td></tr>" for c in cells)
    clusters = "".join(
        f"<h3>{esc(c.cell)}</h3><table><tr><th>submissions</th><th>message</th></tr>"
        + "".join(f"<tr><td>{n}</td><td>{esc(message)}</td></tr>" for message, n in c.messages.most_common(10))
        + "</table>" for c in cells if c.messages)
    plots = "".join(f"<h2>{esc(title)}</h2>{svg}" for title, svg in _plots(results, cells))
    warning = (f"<p class=flag>{len(flagged)} cell(s) failed by at least {FLAG_SHARE:.0%} of the submissions that earn "
               f"{STRONG_SHARE:.0%} of the other points: check these tests: "
               f"{esc(', '.join(c.cell for c in flagged))}</p>" if flagged else "<p>No cell is flagged.</p>")
    return (f"<!doctype html><meta charset=utf-8><title>{esc(assignment)} statistics</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{padding:2px 8px;"
            "border-bottom:1px solid #ddd;text-align:left}.flag{color:#c0392b;font-weight:bold}</style>"
            f"<h1>{esc(assignment)}: {len(results)} submissions</h1>{warning}"
            "<h2>Graded cells</h2><table><tr><th>cell</th><th>points</th><th>pass rate</th>"
            f"<th>strong submissions failing</th><th></th></tr>{rows}</table>{plots}"
            f"<h2>Failure messages, grouped</h2>{clusters or '<p>None.</p>'}")


def write(out: Path) -> dict[str, tuple[Path, list[str]]]:
    """OUT/stats/<assignment>/index.html and stats.csv for every assignment graded in OUT; {assignment: (page, the
    flagged cells)}."""
    from autograder.reports.feedback import load_results

    by_assignment: dict[str, list[Result]] = {}
    for result in load_results(out):
        by_assignment.setdefault(result.assignment, []).append(result)
    pages = {}
    for assignment, results in sorted(by_assignment.items()):
        folder = Path(out) / "stats" / assignment
        folder.mkdir(parents=True, exist_ok=True)
        cells = cell_stats(results)
        with open(folder / "stats.csv", "w", newline="") as handle:
            table = csv.writer(handle)
            table.writerow(["cell", "points", "pass_rate", "flagged"])
            table.writerows([c.cell, f"{c.points:g}", f"{c.pass_rate:.3f}", int(c.flagged)] for c in cells)
        (folder / "index.html").write_text(with_mathml(_page(assignment, results, cells)), encoding="utf-8")
        pages[assignment] = (folder / "index.html", [c.cell for c in cells if c.flagged])
    return pages
