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

It says ``ready to submit`` (and the command exits 0) only when no answer placeholder is left
(``YOUR ANSWER HERE``, ``raise NotImplementedError()``), the notebook has been run, no cell ends
in an error and, for a notebook graded on its Markdown export (``tiny_grpo``), the export is
under the limit with the header; otherwise it exits 1. Render warnings are printed but do not
fail it. Every problem names the cell the way a student finds it: the section heading above it
(a TODO's title), which of that section's cells it is, and its first line. On Colab, where the notebook is not a file
on disk, ``check()`` reads it through Colab's notebook API instead.

Packing a submission (every assignment)::

    submission.pack("grpo_format")

writes ONE zip, ``<id>_submission.zip``, holding ``<id>.ipynb`` (on Colab fetched through
Colab's notebook API, as the editor shows it now; elsewhere the saved file ``<id>.ipynb`` in
the working folder) and the notebook's artifacts folder (:func:`helpers.runtime.artifacts_dir`,
Google Drive on Colab) as ``artifacts/...``, both at the top level of the zip. Training
checkpoints are left out. It checks that the adapters the assignment asks for are there and
that the zip stays under the assignment's pack limit (:func:`pack_limit_mb`), offers the
download on Colab, and prints one line. Anything wrong is a ``SubmissionError`` with one line saying what to do.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import zipfile
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
    """Index of the cell in the notebook (0-based), or None for the notebook as a whole. Never
    shown: students cannot see cell numbers in Jupyter or Colab (see ``where``)."""
    message: str
    where: str = ""
    """The cell as a student finds it: the section heading above it and its first line."""

    def __str__(self) -> str:
        place = self.where or ("the notebook" if self.cell is None else "a cell")
        return f"{place}: {self.message}"


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
    blocking: list[Problem] = field(default_factory=list)
    """What must be fixed before handing in: unanswered placeholders, a notebook never run,
    cells that end in an error."""
    export_graded: bool = True
    """Whether the notebook is graded on its Markdown export (then the limit and header count)."""
    optional: list[Problem] = field(default_factory=list)
    """Optional TODOs (no check or person grades them) still open: a note, never blocking."""

    @property
    def within_limit(self) -> bool:
        return self.characters <= self.limit

    @property
    def ok(self) -> bool:
        """Ready to submit: nothing blocking, and for a notebook graded on its Markdown export
        under the limit and with the header."""
        export_ok = self.within_limit and self.header_ok if self.export_graded else True
        return export_ok and not self.blocking

    def format(self) -> str:
        never_run = next((p for p in self.blocking if p.cell is None and p.message.startswith("not run")), None)
        if never_run is not None:  # the other checks read outputs: one line says what to do first
            todo = sum("placeholder" in p.message for p in self.blocking)
            return (f"submission check: {self.path}\n  => NOT ready to submit: {never_run.message}"
                    + (f" ({todo} answer(s) also still to do)" if todo else ""))
        mark = lambda good: "ok " if good else "FAIL"  # noqa: E731
        share = 100.0 * self.characters / self.limit if self.limit else float("inf")
        lines = [f"submission check: {self.path}"]
        if self.export_graded:
            lines += [f"  [{mark(self.within_limit)}] markdown export: {self.characters:,} characters "
                      f"({share:.0f}% of the {self.limit:,} limit)",
                      f"  [{mark(self.header_ok)}] quarto header: {self.header_message}"]
        todo = [p for p in self.blocking if "placeholder" in p.message]
        other = [p for p in self.blocking if p not in todo]
        if todo:
            lines.append(f"  [FAIL] {len(todo)} answer(s) still to do:")
            lines.extend(f"         - {problem.where}" for problem in todo)
        else:
            lines.append("  [ok ] every answer cell is filled in")
        if other:
            lines.append(f"  [FAIL] {len(other)} problem(s) to fix:")
            lines.extend(f"         - {problem}" for problem in other)
        if self.optional:
            lines.append(f"  [note] {len(self.optional)} optional TODO(s) left open (not graded):")
            lines.extend(f"         - {problem.where}" for problem in self.optional)
        if self.render_problems:
            lines.append(f"  [warn] {len(self.render_problems)} cell(s) may render badly:")
            lines.extend(f"         - {problem}" for problem in self.render_problems)
        else:
            lines.append("  [ok ] no cells that would render badly")
        if self.ok:
            verdict = "ready to submit" + (" (look at the warnings above first)" if self.render_problems else "")
        else:
            verdict = "NOT ready to submit: " + "; ".join(self.reasons())
        lines.append(f"  => {verdict}")
        return "\n".join(lines)

    def reasons(self) -> list[str]:
        """Why it is not ready, a few words each ("not run", "2 answer(s) still to do"); empty when ready."""
        todo = [p for p in self.blocking if "placeholder" in p.message]
        other = sorted((p for p in self.blocking if p not in todo), key=lambda p: not p.message.startswith("not run"))
        reasons = [p.message.split(":")[0] for p in other[:1] if p.message.startswith("not run")]  # the first to do
        reasons += [f"{len(todo)} answer(s) still to do"] if todo else []
        reasons += [p.message.split(":")[0] for p in other]
        if self.export_graded and not self.within_limit:
            reasons.append("over the character limit")
        if self.export_graded and not self.header_ok:
            reasons.append("no quarto header")
        return list(dict.fromkeys(reasons))

    def summary(self) -> str:
        """The report in a line or two when nothing needs fixing (it lands in the export it measures)."""
        if not self.ok or self.render_problems:
            return self.format()
        export = (f"markdown export {self.characters:,} characters ({100.0 * self.characters / self.limit:.0f}% of "
                  f"the {self.limit:,} limit), quarto header present, " if self.export_graded else "")
        lines = [f"submission check: {self.path}: ready to submit ({export}every answer cell filled in, nothing "
                 "that would render badly)"]
        if self.optional:
            lines.append(f"  [note] {len(self.optional)} optional TODO(s) left open (not graded)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


# --------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------


class SubmissionError(RuntimeError):
    """The submission cannot be checked or packed; the message says what to do."""


def colab_notebook(timeout_sec: float = 30):
    """The notebook open in this Colab tab, as the editor has it now (outputs included),
    fetched through Colab's notebook API: on Colab the notebook is not a file on disk."""
    import nbformat
    from google.colab import _message

    try:
        reply = _message.blocking_request("get_ipynb", request="", timeout_sec=timeout_sec)
    except Exception as error:  # noqa: BLE001  (Colab raises its own types)
        raise SubmissionError(f"Colab did not hand over the notebook ({type(error).__name__}: {error}); "
                              "run the cell again, or File → Download .ipynb and pass its path") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("ipynb"), dict):
        raise SubmissionError("Colab did not hand over the notebook (empty reply); run the cell again, or "
                              "File → Download .ipynb and pass its path")
    try:  # through JSON like a file: joins line lists, upgrades old nbformat versions
        return nbformat.reads(json.dumps(reply["ipynb"]), as_version=4)
    except Exception as error:  # noqa: BLE001
        raise SubmissionError(f"Colab's copy of the notebook is not readable ({type(error).__name__}); "
                              "File → Download .ipynb and pass its path") from None


def _in_colab() -> bool:
    from . import runtime

    return runtime.is_colab()


def _read(notebook):
    """An nbformat node from a path or a node; on Colab a path that is not on disk means the
    open notebook, fetched through Colab's API."""
    import nbformat

    if notebook is None:
        if _in_colab():
            return colab_notebook()
        raise SubmissionError("no notebook given: pass the saved notebook's path, e.g. check('tiny_grpo.ipynb')")
    if isinstance(notebook, (str, Path)):
        path = Path(notebook)
        if not path.is_file():
            if _in_colab():
                return colab_notebook()
            raise SubmissionError(f"notebook not found: {path.resolve()} does not exist; save the notebook and "
                                  "pass the path of its .ipynb file")
        try:
            return nbformat.read(str(path), as_version=4)
        except Exception as error:  # noqa: BLE001  (not JSON, not a notebook)
            raise SubmissionError(f"{path} could not be read as a notebook ({type(error).__name__}); pass the "
                                  ".ipynb file itself") from None
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


def _first_line(source: str) -> str:
    """The first line a student would recognise the cell by (placeholders skipped), shortened."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    meaningful = [line for line in lines if not any(marker in line for marker in (*UNANSWERED, "YOUR CODE HERE"))]
    line = (meaningful or lines or [""])[0]
    return line if len(line) <= 60 else line[:57] + "..."


def _heading(source: str) -> str | None:
    """The last Markdown heading in a cell (``## Part 2 ...`` -> ``Part 2 ...``), if any."""
    found = None
    for line in source.splitlines():
        match = re.match(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", line)
        if match:
            found = match.group(1)
    return found


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def cell_locations(notebook) -> list[str]:
    """For every cell, how a student finds it in Jupyter or Colab: the section heading above
    it (a TODO's title), which of that section's cells it is, and its first line."""
    nb = _read(notebook)
    locations, section, counts, asked = [], None, {}, None
    for cell in nb.cells:
        source = cell.get("source", "")
        own = _heading(source) if cell.cell_type == "markdown" else None
        question, asked = asked, _question(source) if cell.cell_type == "markdown" else None
        if question and cell.cell_type == "markdown" and own is None:  # the answer cell right after a question
            where = f' (under "{section}")' if section else ""
            locations.append(f"the answer to {question}{where}")
            continue
        first = _first_line(source)
        if own is not None and source.lstrip().startswith("#"):
            title = next(line for line in source.splitlines() if line.strip()).strip().lstrip("#").strip()
            locations.append(f'the markdown cell "{title if len(title) <= 80 else title[:77] + "..."}"')
            section, counts = own, {}
            continue
        kind = "code" if cell.cell_type == "code" else "text" if cell.cell_type == "markdown" else "raw"
        counts[kind] = counts.get(kind, 0) + 1
        where = f'under "{section}", ' if section else "before the first heading, "
        starting = f' starting "{first}"' if first else " (empty)"
        locations.append(f"{where}the {_ordinal(counts[kind])} {kind} cell{starting}")
        if own is not None:
            section, counts = own, {}
    return locations


QUESTION = re.compile(r"^\s*(?:#+\s*)?\**\s*((?:Question|Problem)\s+\d+)\b")


def _question(source: str) -> str | None:
    """"Question 2" when a markdown cell asks a numbered question (its first line says so), else None."""
    found = QUESTION.match(source)
    return found.group(1) if found else None


def _unanswered(source: str) -> bool:
    """A placeholder line as the release has it (``YOUR ANSWER HERE``, ``raise NotImplementedError()``
    alone on a line); instructions that quote them inline do not count."""
    return any(line.strip() in UNANSWERED for line in source.splitlines())


def graded_answer_cells(nb) -> set[int]:
    """Indexes of the cells whose answer is graded: written answers that carry points, and code TODOs
    a test cell comes after (an extension after the last test is optional). A cell without the
    course's metadata (a notebook pasted together) counts as graded: nothing says it is not."""
    def meta(cell):
        return cell.get("metadata", {}).get("nbgrader", {})

    tests = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and meta(c).get("grade")
             and not meta(c).get("solution")]
    last_test = max(tests, default=-1)
    return {i for i, c in enumerate(nb.cells)
            if not meta(c) or meta(c).get("grade") or (meta(c).get("solution") and i < last_test)}


def optional_todos(notebook) -> list[Problem]:
    """Answer cells no test or person grades that still hold their placeholder (an optional extension)."""
    nb = _read(notebook)
    where, graded = cell_locations(nb), graded_answer_cells(nb)
    return [Problem(i, "an optional TODO (not graded) is still open", where[i])
            for i, cell in enumerate(nb.cells) if i not in graded and _unanswered(cell.get("source", ""))]


def blocking_problems(notebook) -> list[Problem]:
    """What stops a notebook from being ready: unanswered placeholders in graded answers, cells that
    end in an error, and a notebook whose code cells were never run (no outputs, no execution counts)."""
    nb = _read(notebook)
    where, graded = cell_locations(nb), graded_answer_cells(nb)
    problems = []
    for index, cell in enumerate(nb.cells):
        source = cell.get("source", "")
        if _unanswered(source) and index in graded:
            problems.append(Problem(index, "still holds the unanswered placeholder (YOUR ANSWER HERE / "
                                           "NotImplementedError)", where[index]))
        if cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    problems.append(Problem(index, f"ends in an error ({output.get('ename', 'Error')}): fix it, or "
                                                   "run the notebook again from the top", where[index]))
                    break
    code = [c for c in nb.cells if c.cell_type == "code" and c.get("source", "").strip()]
    if code and not any(c.get("outputs") or c.get("execution_count") for c in code):
        problems.append(Problem(None, "not run: no code cell has an output or was executed; run every cell "
                                      "(Run → Run All Cells, or Runtime → Run all on Colab), save, then check again",
                                "the notebook"))
    return problems


def render_problems(notebook) -> list[Problem]:
    """Cells whose Markdown export would look broken or noisy (warnings: they do not stop a
    submission)."""
    nb = _read(notebook)
    where = cell_locations(nb)
    problems = []

    def flag(index: int, message: str) -> None:
        problems.append(Problem(index, message, where[index]))

    for index, cell in enumerate(nb.cells):
        source = cell.get("source", "")
        if cell.cell_type == "raw" and index > 0:
            flag(index, "raw cell: it is copied into the export unrendered; use a markdown cell")
        if cell.cell_type == "markdown":
            fences = sum(1 for line in source.splitlines() if line.lstrip().startswith("```"))
            if fences % 2:
                flag(index, "unclosed ``` code fence: everything after it renders as code")
            if _unbalanced_math(source):
                flag(index, "odd number of $$: a display-math block is not closed")
            if re.search(r"data:image/[a-z]+;base64,", source):
                flag(index, "embedded base64 image: it counts towards the character limit")
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                continue  # a blocking problem (blocking_problems)
            if WIDGET_MIME in output.get("data", {}):
                flag(index, "widget output (e.g. a tqdm bar): it exports as a placeholder such as 'HBox(...)'; "
                            "use a text progress bar")
            text = _output_text(output)
            if "\r" in text:
                flag(index, "output rewrites lines with carriage returns (a progress bar): every update appears "
                            "in the export")
            if ANSI_ESCAPE.search(text):
                flag(index, "output holds ANSI colour codes: they export as escape garbage")
            n_lines = text.count("\n") + 1 if text else 0
            if n_lines > MAX_OUTPUT_LINES:
                flag(index, f"output has {n_lines} lines (> {MAX_OUTPUT_LINES}): trim what you print")
    return problems


def _export_graded(nb, path, assignment: str | None = None) -> bool:
    """Graded on its Markdown export (limit and header apply): a course notebook named so, or any
    notebook that is not a course assignment graded otherwise."""
    stem = assignment or (Path(path).stem if isinstance(path, (str, Path)) else None)
    course = _course_assignments()
    if export_limit(stem) is not None:
        return True
    if stem in course:
        return False
    first = nb.cells[0] if nb.cells else None
    has_header = first is not None and first.get("source", "").lstrip().startswith("---")
    from_course = any(c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells)
    return has_header or not from_course


def _course_assignments() -> set[str]:
    try:
        from . import course_settings

        return set(course_settings._all())
    except Exception:  # noqa: BLE001  (no grading.json: a checkout without generated data)
        return set()


def check_notebook(path=None, limit: int = CHARACTER_LIMIT, assignment: str | None = None) -> Report:
    """Export ``path`` to Markdown and check it; nothing is printed. On Colab, ``None`` (or a
    path that is not on disk) checks the open notebook, fetched through Colab's API.
    ``assignment`` (default: the file's name) decides whether the export's limit and header
    count: only for an assignment graded on its Markdown export (:func:`export_limit`)."""
    nb = _read(path)
    markdown, _ = export_markdown(nb)
    header_ok, header_message = check_header(nb)
    return Report(
        path=str(path) if isinstance(path, (str, Path)) and Path(path).is_file() else "<open notebook>",
        characters=len(markdown),
        limit=limit,
        header_ok=header_ok,
        header_message=header_message,
        render_problems=render_problems(nb),
        markdown=markdown,
        blocking=blocking_problems(nb),
        export_graded=_export_graded(nb, path, assignment),
        optional=optional_todos(nb),
    )


def check(path=None, limit: int = CHARACTER_LIMIT, write: str | Path | None = None) -> Report:
    """Check a notebook from a notebook cell: prints the report (one line when it is ready) and returns it.

    Save the notebook first: the file on disk is what gets checked. On Colab the open notebook
    is checked as the editor has it (through Colab's API) when ``path`` is None or not on disk.
    ``write`` also saves the Markdown export there, so you can read exactly what will be graded.
    """
    report = check_notebook(path, limit)
    if write is not None:
        Path(write).write_text(report.markdown)
    print(report.summary())
    return report


# --------------------------------------------------------------------------------------
# Packing: the notebook and its artifacts in one zip
# --------------------------------------------------------------------------------------

MAX_SUBMISSION_MB = 100.0
"""Largest zip contents (uncompressed, notebook included) ``pack`` accepts, in MB, for a notebook
outside the course; a course assignment's manifest sets its own (``pack_mb``). The adapters the
course asks for are a few MB (tiny) to ~70 MB (a rank-32 LoRA on 1.5B)."""


def pack_limit_mb(assignment_id: str) -> float:
    """The largest zip contents ``pack`` makes for ``assignment_id``, in MB (its manifest's ``pack_mb``)."""
    from . import course_settings

    try:
        return float(course_settings.settings(assignment_id).get("pack_mb", MAX_SUBMISSION_MB))
    except (KeyError, OSError, ValueError):  # an assignment outside this course, or no grading.json
        return MAX_SUBMISSION_MB



def required_artifacts(assignment_id: str) -> tuple[str, ...]:
    """Folders (relative to the artifacts folder) ``assignment_id`` is graded on: LoRA adapters
    saved with ``helpers.lm.save_adapter``, as the assignment's manifest lists them."""
    from . import course_settings

    try:
        return course_settings.required_artifacts(assignment_id)
    except KeyError:  # an assignment outside this course
        return ()


def export_limit(assignment_id: str | None) -> int | None:
    """The character limit of ``assignment_id``'s Markdown export when it is graded on that export
    (its manifest's ``export_limit``), else None."""
    from . import course_settings

    try:
        return course_settings.settings(assignment_id).get("export_limit") if assignment_id else None
    except (KeyError, OSError, ValueError):  # an assignment outside this course, or no grading.json
        return None

LEFT_OUT = ("checkpoints", "__pycache__", ".ipynb_checkpoints")
"""Folders under the artifacts folder that are never packed (training checkpoints are big and
are not graded); names starting with ``.`` are left out too."""

ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


def _default_notebook(assignment_id: str) -> Path | None:
    candidates = [Path.cwd() / f"{assignment_id}.ipynb"]
    session = os.environ.get("JPY_SESSION_NAME", "")  # Jupyter Server >= 2: the open notebook's path
    if session.endswith(".ipynb"):
        candidates.append(Path(session))
    return next((c for c in candidates if c.is_file()), None)


def _notebook_for(assignment_id: str, notebook):
    if notebook is None and not _in_colab():
        found = _default_notebook(assignment_id)
        if found is None:
            raise SubmissionError(f"notebook not found: no {assignment_id}.ipynb in {Path.cwd()}; save the notebook "
                                  f"and pass its path, e.g. pack({assignment_id!r}, "
                                  f"notebook='path/to/{assignment_id}.ipynb')")
        notebook = found
    nb = _read(notebook)
    graded = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")]
    if not graded:
        raise SubmissionError(f"the notebook has no graded cells, so it is not the {assignment_id} notebook handed "
                              f"out (or a copy that lost its metadata): pack the released {assignment_id}.ipynb you "
                              "worked in")
    return nb


def _artifact_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part in LEFT_OUT or part.startswith(".") for part in parts):
            continue
        if path.is_file():
            files.append(path)
    return files


def _check_required(assignment_id: str, folder: Path, required) -> None:
    for name in required:
        target = folder / name
        if not target.exists():
            raise SubmissionError(f"missing adapter: {target} does not exist; run the training cell of {assignment_id} "
                                  "(it saves the adapter there) and pack again")
        if name.endswith("adapter"):
            absent = [f for f in ADAPTER_FILES if not (target / f).is_file()]
            if absent:
                raise SubmissionError(f"missing adapter: {target} has no {' or '.join(absent)}; run the training "
                                      "cell again to the end (it saves the adapter with helpers.lm.save_adapter) "
                                      "and pack again")


def zip_problems(path: str | Path, assignment_id: str) -> list[str]:
    """What is wrong with a submission zip's shape (empty list: ``<id>.ipynb`` at the top level,
    artifacts under ``artifacts/``, every required adapter present)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
    except (OSError, zipfile.BadZipFile) as error:
        return [f"{path} is not a readable zip ({error})"]
    problems = []
    if f"{assignment_id}.ipynb" not in names:
        problems.append(f"no {assignment_id}.ipynb at the top level of the zip")
    stray = [n for n in names if n != f"{assignment_id}.ipynb" and not n.startswith("artifacts/")]
    if stray:
        problems.append(f"files outside artifacts/: {', '.join(stray[:3])}")
    for name in required_artifacts(assignment_id):
        for required in ADAPTER_FILES:
            if f"artifacts/{name}/{required}" not in names:
                problems.append(f"no artifacts/{name}/{required}")
    return problems


def pack(assignment_id: str, notebook=None, artifacts: str | Path | None = None, out: str | Path | None = None,
         download: bool | None = None) -> Path:
    """Pack the notebook and its artifacts into ``<id>_submission.zip``; return the zip's path.

    Args:
        assignment_id: e.g. ``"grpo_format"``; the notebook is stored as ``<id>.ipynb``.
        notebook: a path or an nbformat node. Default: on Colab the open notebook (Colab's API),
            elsewhere ``<id>.ipynb`` in the working folder (save it first).
        artifacts: the artifacts folder. Default :func:`helpers.runtime.artifacts_dir`.
        out: where to write the zip. Default: beside the artifacts folder on Colab (on Drive),
            else the working folder.
        download: offer the zip as a browser download. Default: on Colab only.

    Raises:
        SubmissionError: notebook not found or not a course notebook, an adapter the assignment
            requires missing (:func:`required_artifacts`), or the contents over its size limit
            (:func:`pack_limit_mb`); one line saying what to do.
    """
    from . import runtime

    if not isinstance(assignment_id, str) or not re.fullmatch(r"[A-Za-z0-9_]+", assignment_id):
        raise SubmissionError(f"assignment_id must be the notebook's id such as 'grpo_format', got {assignment_id!r}")
    import nbformat

    nb = _notebook_for(assignment_id, notebook)
    folder = Path(artifacts) if artifacts is not None else runtime.artifacts_dir(assignment_id, create=False)
    _check_required(assignment_id, folder, tuple(required_artifacts(assignment_id)))
    files = _artifact_files(folder) if folder.is_dir() else []
    max_mb = pack_limit_mb(assignment_id)
    notebook_bytes = nbformat.writes(nb).encode("utf-8")
    total = len(notebook_bytes) + sum(f.stat().st_size for f in files)
    if total > max_mb * 1e6:
        biggest = max(files, key=lambda f: f.stat().st_size, default=None)
        where = (f"; the biggest file is {biggest.relative_to(folder)} ({biggest.stat().st_size / 1e6:.1f} MB)"
                 if biggest is not None else "")
        raise SubmissionError(f"artifacts too large: the submission holds {total / 1e6:.1f} MB, over the {max_mb:g} MB "
                              f"limit{where}; delete from {folder} what the assignment does not ask for, "
                              "or clear large outputs in the notebook")
    if out is None:
        where = folder.parent if runtime.is_colab() and artifacts is None else Path.cwd()
        out = where / f"{assignment_id}_submission.zip"
    out = Path(out)
    if folder.is_dir() and folder.resolve() in out.resolve().parents:
        raise SubmissionError(f"out={out} is inside the artifacts folder {folder}; write the zip somewhere else")
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=".pack-", suffix=".zip", dir=out.parent)
    os.close(handle)
    try:
        with zipfile.ZipFile(scratch, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"{assignment_id}.ipynb", notebook_bytes)
            for file in files:
                archive.write(file, f"artifacts/{file.relative_to(folder).as_posix()}")
        problems = zip_problems(scratch, assignment_id)
        if problems:
            raise SubmissionError(f"the zip came out wrong ({'; '.join(problems)}); tell the course staff")
        os.replace(scratch, out)
    finally:
        if os.path.exists(scratch):
            os.remove(scratch)
    report = check_notebook(nb, export_limit(assignment_id) or CHARACTER_LIMIT, assignment=assignment_id)
    offer = runtime.is_colab() if download is None else download
    if offer:
        from google.colab import files as colab_files

        colab_files.download(str(out))
    packed = (f"submission: {out} ({assignment_id}.ipynb + {len(files)} artifact file(s), {total / 1e6:.1f} MB)"
              f"{'; download started' if offer else ''}")
    if report.ok:
        print(f"{packed}; hand in this zip")
    else:
        missing = "; ".join(report.reasons())
        print(f"{packed}; NOT ready to hand in yet ({missing}): run submission.check() to see where, fix it, "
              "save, and pack again")
    return out


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
