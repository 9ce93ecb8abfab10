"""Pre-submission checker: export a notebook to Markdown and say whether it is ready to hand in.

The course grades the Markdown export of a notebook (outputs included), so three things are
checked here, on exactly that export:

* its length in characters against the limit (40,000 by default);
* the Quarto YAML header in the first cell (``format: html: code-fold: true`` and
  ``jupyter: python3``), which the course's HTML rendering relies on;
* cells that would render badly: error tracebacks, progress-bar spam, widget placeholders,
  ANSI colour codes, huge outputs, unclosed code fences or math, unanswered TODOs.

From a notebook cell::

    from helpers import submission
    submission.check("tiny_grpo.ipynb")          # prints the report, returns it

From a shell::

    python -m helpers.submission tiny_grpo.ipynb [--limit 40000] [--write export.md]

The command exits 1 when the export is over the limit or the header is missing, 0 otherwise
(render warnings are printed but do not fail it).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

CHARACTER_LIMIT = 40_000
"""The course's limit on the Markdown export, in characters."""

MAX_OUTPUT_LINES = 60
"""A single output longer than this many lines is flagged: it buries the write-up."""

REQUIRED_HEADER = {"format": {"html": {"code-fold": True}}, "jupyter": "python3"}
HEADER_EXAMPLE = "---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n---"

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
UNANSWERED = ("YOUR ANSWER HERE", "raise NotImplementedError()")


@dataclass
class Problem:
    cell: int | None
    """Index of the cell in the notebook (0-based), or None for the notebook as a whole."""
    message: str

    def __str__(self) -> str:
        where = "notebook" if self.cell is None else f"cell {self.cell}"
        return f"{where}: {self.message}"


@dataclass
class Report:
    path: str
    characters: int
    limit: int
    header_ok: bool
    header_message: str
    render_problems: list[Problem] = field(default_factory=list)
    markdown: str = field(default="", repr=False)
    """The exported Markdown itself (what was counted)."""

    @property
    def within_limit(self) -> bool:
        return self.characters <= self.limit

    @property
    def ok(self) -> bool:
        """Ready to submit as far as the hard rules go: under the limit and with the header."""
        return self.within_limit and self.header_ok

    def format(self) -> str:
        mark = lambda good: "ok " if good else "FAIL"  # noqa: E731
        share = 100.0 * self.characters / self.limit if self.limit else float("inf")
        lines = [
            f"submission check: {self.path}",
            f"  [{mark(self.within_limit)}] markdown export: {self.characters:,} characters "
            f"({share:.0f}% of the {self.limit:,} limit)",
            f"  [{mark(self.header_ok)}] quarto header: {self.header_message}",
        ]
        if self.render_problems:
            lines.append(f"  [warn] {len(self.render_problems)} cell(s) may render badly:")
            lines.extend(f"         - {problem}" for problem in self.render_problems)
        else:
            lines.append("  [ok ] no cells that would render badly")
        verdict = "ready to submit" if self.ok else "NOT ready to submit"
        if self.ok and self.render_problems:
            verdict += " (look at the warnings above first)"
        lines.append(f"  => {verdict}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


# --------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------


def _read(notebook):
    import nbformat

    if isinstance(notebook, (str, Path)):
        return nbformat.read(str(notebook), as_version=4)
    return notebook


def export_markdown(notebook) -> tuple[str, dict]:
    """The notebook (a path or an nbformat node) as Markdown, the way nbconvert writes it.

    Images become links to separate files (in the returned resources), so they do not count
    towards the limit; text outputs are included verbatim.
    """
    from nbconvert import MarkdownExporter

    body, resources = MarkdownExporter().from_notebook_node(_read(notebook))
    return body, resources


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def _contains(actual, required) -> bool:
    if isinstance(required, dict):
        return isinstance(actual, dict) and all(k in actual and _contains(actual[k], v) for k, v in required.items())
    if isinstance(required, bool):
        return actual is required
    return str(actual).strip() == str(required)


def check_header(notebook) -> tuple[bool, str]:
    """Whether cell 0 is a Quarto YAML header with the settings the course asks for."""
    import yaml

    nb = _read(notebook)
    if not nb.cells:
        return False, "the notebook has no cells; cell 0 must be the YAML header"
    first = nb.cells[0]
    if first.cell_type not in ("raw", "markdown"):
        return False, f"cell 0 is a {first.cell_type} cell; make it a raw (or markdown) cell holding\n{HEADER_EXAMPLE}"
    if first.cell_type == "raw" and first.get("metadata", {}).get("raw_mimetype") not in (None, "", "text/markdown"):
        return False, ("cell 0 is a raw cell whose format (raw_mimetype) drops it from the Markdown "
                       "export; clear its 'Raw NBConvert Format'")
    lines = first.source.strip().splitlines()
    if len(lines) < 2 or lines[0].strip() != "---" or "---" not in (line.strip() for line in lines[1:]):
        return False, f"cell 0 does not start with a YAML block between '---' lines; it should read\n{HEADER_EXAMPLE}"
    closing = [i for i, line in enumerate(lines) if i > 0 and line.strip() == "---"][0]
    try:
        data = yaml.safe_load("\n".join(lines[1:closing])) or {}
    except yaml.YAMLError as error:
        return False, f"cell 0's YAML does not parse ({str(error).splitlines()[0]})"
    if not isinstance(data, dict):
        return False, "cell 0's YAML is not a mapping of settings"
    missing = []
    if not _contains(data.get("format"), REQUIRED_HEADER["format"]):
        missing.append("format: html: code-fold: true")
    if not _contains(data.get("jupyter"), REQUIRED_HEADER["jupyter"]):
        missing.append("jupyter: python3")
    if missing:
        return False, f"cell 0's YAML lacks {' and '.join(missing)}"
    return True, "present (format: html: code-fold: true, jupyter: python3)"


def _output_text(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return data.get("text/plain", "") if isinstance(data.get("text/plain", ""), str) else ""


def _unbalanced_math(source: str) -> bool:
    without_code = re.sub(r"```.*?```", "", source, flags=re.DOTALL)
    without_code = re.sub(r"`[^`\n]*`", "", without_code)
    without_code = without_code.replace(r"\$", "")
    return without_code.count("$$") % 2 == 1


def render_problems(notebook) -> list[Problem]:
    """Cells whose Markdown export would look broken or noisy."""
    nb = _read(notebook)
    problems = []
    for index, cell in enumerate(nb.cells):
        source = cell.get("source", "")
        if any(marker in source for marker in UNANSWERED):
            problems.append(Problem(index, "still holds the unanswered placeholder (YOUR ANSWER HERE / NotImplementedError)"))
        if cell.cell_type == "raw" and index > 0:
            problems.append(Problem(index, "raw cell: it is copied into the export unrendered; use a markdown cell"))
        if cell.cell_type == "markdown":
            fences = sum(1 for line in source.splitlines() if line.lstrip().startswith("```"))
            if fences % 2:
                problems.append(Problem(index, "unclosed ``` code fence: everything after it renders as code"))
            if _unbalanced_math(source):
                problems.append(Problem(index, "odd number of $$: a display-math block is not closed"))
            if re.search(r"data:image/[a-z]+;base64,", source):
                problems.append(Problem(index, "embedded base64 image: it counts towards the character limit"))
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "error":
                problems.append(Problem(index, f"error output ({output.get('ename', 'Error')}): fix it or re-run the cell"))
                continue
            if WIDGET_MIME in output.get("data", {}):
                problems.append(Problem(index, "widget output (e.g. a tqdm bar): it exports as a placeholder such as "
                                               "'HBox(...)'; use a text progress bar"))
            text = _output_text(output)
            if "\r" in text:
                problems.append(Problem(index, "output rewrites lines with carriage returns (a progress bar): every "
                                               "update appears in the export"))
            if ANSI_ESCAPE.search(text):
                problems.append(Problem(index, "output holds ANSI colour codes: they export as escape garbage"))
            n_lines = text.count("\n") + 1 if text else 0
            if n_lines > MAX_OUTPUT_LINES:
                problems.append(Problem(index, f"output has {n_lines} lines (> {MAX_OUTPUT_LINES}): trim what you print"))
    return problems


def check_notebook(path, limit: int = CHARACTER_LIMIT) -> Report:
    """Export ``path`` to Markdown and check it; nothing is printed."""
    nb = _read(path)
    markdown, _ = export_markdown(nb)
    header_ok, header_message = check_header(nb)
    return Report(
        path=str(path) if isinstance(path, (str, Path)) else "<notebook>",
        characters=len(markdown),
        limit=limit,
        header_ok=header_ok,
        header_message=header_message,
        render_problems=render_problems(nb),
        markdown=markdown,
    )


def check(path, limit: int = CHARACTER_LIMIT, write: str | Path | None = None) -> Report:
    """Check a notebook from a notebook cell: prints the report and returns it.

    Save the notebook first: the file on disk is what gets checked. ``write`` also saves the
    Markdown export there, so you can read exactly what will be graded.
    """
    report = check_notebook(path, limit)
    if write is not None:
        Path(write).write_text(report.markdown)
    print(report.format())
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.submission",
        description="Export a notebook to Markdown and check its length, Quarto header and rendering.",
    )
    parser.add_argument("notebook", help="the .ipynb file to check (save it first)")
    parser.add_argument("--limit", type=int, default=CHARACTER_LIMIT, help="character limit (default: %(default)s)")
    parser.add_argument("--write", metavar="MD", help="also write the Markdown export to this file")
    args = parser.parse_args(argv)
    path = Path(args.notebook)
    if not path.is_file():
        print(f"error: {path} does not exist or is not a file", file=sys.stderr)
        return 2
    try:
        report = check(path, args.limit, args.write)
    except Exception as error:  # not JSON, not a notebook
        print(f"error: {path} could not be read as a notebook ({type(error).__name__}: {error})", file=sys.stderr)
        return 2
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
