"""What the grader writes for people: feedback pages, result.json, Gradescope's results.json,
OUT/grades.csv and the LMS grade file.

- ``OUT/feedback/<student>/<assignment>/<assignment>.html``: a summary box (autograded score,
  written answers graded or pending, status, every feedback line) on top of nbgrader's feedback;
  ``result.json`` (all of :class:`Result`) and ``results.json`` (Gradescope) beside it.
- ``OUT/grades.csv``: one row per submission, autograded + manual totals, one column per
  autograded cell, the feedback lines. ``nbgrader export`` in OUT writes ``nbgrader_grades.csv``
  instead (see ``manual.OUT_CONFIG``), so it never replaces this file.
- ``OUT/lms_grades.csv``: the LMS's own user id (recorded by ``collect``), the student's name as
  the LMS spells it, points and lateness, ready to upload.

Every text that reaches a student passes through the submission's :class:`scrub.Scrubber`.
"""
from __future__ import annotations

import csv
import html
import json
import re
import time
from dataclasses import asdict
from pathlib import Path

from autograder.outcome import Result
from autograder.reports.offline_math import with_mathml
from autograder.reports.scrub import Scrubber

GRADES_COLUMNS = ["student", "assignment", "score", "max_score", "manual_score", "manual_max", "late_penalty", "total",
                  "total_max", "status", "late", "submitted_at", "timestamp_source", "seconds"]


def total(result: Result) -> tuple[float, float]:
    """(points so far, points possible): autograded plus the written answers once graded, minus
    the late penalty (never below 0) -- nbgrader's own total for the submission."""
    got = result.score + (result.manual_score or 0.0) - (result.late_penalty or 0.0)
    return round(max(0.0, got), 6), result.max_score + result.manual_max


def summary_html(result: Result) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in result.feedback)
    late = " (late)" if result.late else ""
    penalty = f"; late penalty -{result.late_penalty:g}" if result.late_penalty else ""
    lines = [f"<h2>{html.escape(result.assignment)}: autograded {result.score:g} / {result.max_score:g}{late}"
             f"{penalty}</h2>"]
    got, possible = total(result)
    if result.manual_max:
        if result.manual_score is None:
            lines.append(f"<p>written answers: not graded yet ({result.manual_max:g} points pending); total so "
                         f"far {got:g} / {possible:g}, the written points added once graded</p>")
        else:
            lines.append(f"<p>written answers: {result.manual_score:g} / {result.manual_max:g}; "
                         f"total {got:g} / {possible:g}</p>")
    elif result.late_penalty:
        lines.append(f"<p>total {got:g} / {possible:g}</p>")
    lines.append(f"<p>status: {html.escape(result.status)}</p><ul>{items}</ul>")
    box = "<div id='autograder-summary' style='border:2px solid #888;padding:8px;margin:8px'>"
    return box + "".join(lines) + "</div>"


def gradescope_json(result: Result) -> dict:
    """Gradescope autograder results (https://gradescope-autograders.readthedocs.io)."""
    tests = []
    for name, (score, max_score) in result.cells.items():
        tests.append({"name": name, "score": score, "max_score": max_score,
                      "status": "passed" if score >= max_score else "failed",
                      "output": result.cell_messages.get(name, "" if score >= max_score else "not passed")})
    output = [f"status: {result.status}" + (" (late)" if result.late else ""),
              f"score: the autograded points only ({result.max_score:g})"
              + (f"; the written answers ({result.manual_max:g} points) are graded by hand and added later"
                 if result.manual_max else "")] + list(result.feedback)
    return {"score": round(max(0.0, result.score - result.late_penalty), 6), "max_score": result.max_score,
            "output": "\n".join(output), "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"status": result.status, "late": result.late, "submitted_at": result.submitted_at,
                           "late_penalty": result.late_penalty, "manual_max": result.manual_max,
                           "manual_score": result.manual_score}}


def scrub_result(result: Result, scrub: Scrubber | None) -> Result:
    if scrub:
        result.feedback = [scrub(line) for line in result.feedback]
        result.cell_messages = {k: scrub(v) for k, v in result.cell_messages.items()}
    return result


def feedback_dir(out: Path, result: Result) -> Path:
    return Path(out) / "feedback" / result.student / result.assignment


def write_result_files(result: Result, out: Path) -> None:
    target = feedback_dir(out, result)
    target.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in asdict(result).items()}
    (target / "result.json").write_text(json.dumps(data, indent=2))
    (target / "results.json").write_text(json.dumps(gradescope_json(result), indent=2))


def keep_body(result: Result, out: Path, html_file: Path | None, scrub: Scrubber | None = None) -> None:
    """Keep nbgrader's page for ``result``, scrubbed, as the body :func:`write_page` renders (none: the page
    will be the summary alone, and a body kept from an earlier grading of it is removed)."""
    body = _body_path(out, result)
    if html_file is None or not Path(html_file).exists():
        body.unlink(missing_ok=True)
        return
    cleaned = Path(html_file).read_text(errors="replace")
    body.parent.mkdir(parents=True, exist_ok=True)
    body.write_text(scrub(cleaned) if scrub else cleaned)


def write_page(result: Result, out: Path) -> None:
    """The student's page: our summary on top of the kept body (nbgrader's feedback, scrubbed), or alone."""
    page = feedback_dir(out, result) / f"{result.assignment}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    body = _body_path(out, result)
    if body.exists():
        cleaned = body.read_text(errors="replace")
        summary = summary_html(result)
        text = cleaned.replace("<body>", "<body>" + summary, 1) if "<body>" in cleaned else summary + cleaned
        text = _one_total(text, result)
    else:  # still give the student a page that says what happened
        text = f"<html><body>{summary_html(result)}</body></html>"
    page.write_text(with_mathml(text))


NBGRADER_SCORE = re.compile(r"\(Score: [0-9.]+ / [0-9.]+\)")


PENDING = "graded by hand, not yet"


def _one_total(page: str, result: Result) -> str:
    """While a written answer is open nbgrader's heading adds the answers graded so far; every other
    view (our summary, grades.csv, the LMS file) counts the autograded points only until all are.
    nbgrader also scores each open answer 0 ("Score: 0.0 / 3.0"): it says "not yet" instead."""
    if result.manual_max and result.manual_score is None:
        got, possible = total(result)
        page = NBGRADER_SCORE.sub(f"(Score so far: {got:g} / {possible:g}, written answers pending)", page, count=1)
    for grade_id in result.open_answers:
        anchor = re.escape(grade_id)
        page = re.sub(rf'(<a href="#{anchor}">[^<]*</a> )\(Score: [0-9.]+ / ([0-9.]+)\)',
                      lambda m: f"{m.group(1)}({PENDING}, {float(m.group(2)):g} points)", page)
        page = re.sub(rf'(<a name="{anchor}"></a><div class="panel-heading">.*?<span class="pull-right">\s*)'
                      r"Score: [0-9.]+ / ([0-9.]+)", lambda m: f"{m.group(1)}{PENDING}, {float(m.group(2)):g} points",
                      page, count=1, flags=re.S)
    return page


def _body_path(out: Path, result: Result) -> Path:
    """nbgrader's page without our summary, kept to re-render the summary later (instructor side)."""
    return Path(out) / ".feedback-bodies" / result.student / f"{result.assignment}.html"


def finish(result: Result, out: Path, started: float, html_file: Path | None, scrub: Scrubber | None = None) -> Result:
    """The grading worker's last step: time taken, every line scrubbed, nbgrader's page kept as a body.
    The batch's ``Recorder`` writes the page and the result files, once, when the result comes back."""
    result.seconds = round(time.perf_counter() - started, 1)
    scrub_result(result, scrub)
    keep_body(result, out, html_file, scrub)
    return result


def load_results(out: Path) -> list[Result]:
    found = []
    for path in sorted(Path(out).glob("feedback/*/*/result.json")):
        try:
            data = json.loads(path.read_text())
            found.append(Result(**{k: v for k, v in data.items() if k in Result.__dataclass_fields__}))
        except Exception:
            continue
    return found


def merge_results(earlier: list[Result], fresh: list[Result]) -> list[Result]:
    """``fresh`` and, for every other (student, assignment), its entry in ``earlier`` (an earlier run on
    the same OUT), sorted: grades.csv, like the gradebook, is updated rather than replaced by a partial re-run."""
    merged = {(r.student, r.assignment): r for r in fresh}
    for old in earlier:
        merged.setdefault((old.student, old.assignment), old)
    return sorted(merged.values(), key=lambda r: (r.student, r.assignment))


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(row: list) -> list:
    """``row`` with every text cell a spreadsheet would read as a formula (``=``, ``+``, ``-``,
    ``@``, tab, CR first: OWASP's CSV injection list) prefixed with ``'``; numbers stay numbers.
    Names in the LMS file are the students' own (``=HYPERLINK(...)`` as a Moodle name reached the
    instructor's spreadsheet), and feedback lines quote their code's messages."""
    safe = []
    for value in row:
        if isinstance(value, str) and value.startswith(FORMULA_START):
            try:
                float(value)
            except ValueError:
                value = "'" + value
        safe.append(value)
    return safe


def write_grades(results: list[Result], path: Path) -> None:
    cell_names = list(dict.fromkeys(name for result in results for name in result.cells))
    tmp = Path(path).with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*GRADES_COLUMNS, *cell_names, "feedback"])
        for r in results:
            got, possible = total(r)
            cells = [f"{r.cells[name][0]:g}" if name in r.cells else "" for name in cell_names]
            row = [r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}",
                   "" if r.manual_score is None else f"{r.manual_score:g}", f"{r.manual_max:g}",
                   f"{r.late_penalty:g}", f"{got:g}", f"{possible:g}", r.status, "late" if r.late else "",
                   r.submitted_at, r.timestamp_source, r.seconds, *cells, " | ".join(r.feedback)]
            writer.writerow(spreadsheet_safe(row))
    tmp.replace(path)


def write_lms_grades(results: list[Result], lms: dict, path: Path) -> None:
    """One row per submission with the LMS's user id and name, ready to upload."""
    tmp = Path(path).with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["lms", "lms_user_id", "name", "student", "assignment", "points", "max_points",
                         "autograded", "manual", "late_penalty", "manual_graded", "status", "late"])
        for r in results:
            meta = lms.get(r.student, {})
            got, possible = total(r)
            row = [meta.get("lms", ""), meta.get("user_id", ""), meta.get("name", r.student), r.student,
                   r.assignment, f"{got:g}", f"{possible:g}", f"{r.score:g}",
                   "" if r.manual_score is None else f"{r.manual_score:g}", f"{r.late_penalty:g}",
                   "yes" if r.manual_score is not None or not r.manual_max else "no", r.status,
                   "late" if r.late else ""]
            writer.writerow(spreadsheet_safe(row))
    tmp.replace(path)


def format_table(results: list[Result], open_cells: dict | None = None) -> str:
    """autograded, written (graded, open cells, or "-" with none), late penalty, total, status."""
    open_cells = open_cells or {}
    rows = [("student", "assignment", "autograded", "written", "late", "total", "status")]
    for r in results:
        still = open_cells.get((r.student, r.assignment))
        written = ("-" if not r.manual_max else f"open: {', '.join(still)}" if still else
                   "not graded" if r.manual_score is None else f"{r.manual_score:g} / {r.manual_max:g}")
        got, possible = total(r)
        shown = f"{got:g} / {possible:g}" if r.manual_score is not None or not r.manual_max else "-"
        rows.append((r.student, r.assignment, f"{r.score:g} / {r.max_score:g}", written,
                     f"-{r.late_penalty:g}" if r.late_penalty else ("late" if r.late else ""), shown,
                     r.status))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
