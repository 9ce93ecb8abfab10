"""Keep hidden tests and reference answers out of everything a student gets back.

nbgrader shows hidden-test source in feedback by default, and a notebook can print whatever it
reads (``In``, ``linecache``, a caller's frame, a file). So after autograding:

- every test cell's source loses its hidden region (``### BEGIN HIDDEN TESTS`` ...);
- every error output keeps only ``Name: message`` (tracebacks quote the failing line);
- every line of a hidden region or of a solution block in the *source* notebook, and every line
  of the assignment's hidden-test files (``<course>/hidden_tests/<id>/``: what the kernel ran as a
  probe; at least :data:`MIN_LENGTH` characters, and not also in the student release) is replaced by
  ``[hidden line]`` wherever it appears in any output of any cell, in the feedback HTML (raw and
  HTML-escaped), in the feedback lines and in ``result.json`` / ``results.json``.

Also replaced everywhere: token-shaped strings (Hugging Face, GitHub, cloud keys) and the grader's
own folders (the kit, its Python, the grader's home, temp and grading folders) by labels.

What is not scrubbed: the student's own code cells (they wrote them), and anything transformed
beyond recognition (a hidden line printed backwards). The sandbox is what keeps the kernel from
reading the course copy in the first place; this is the second line.
"""
from __future__ import annotations

import hashlib
import html
import os
import re
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests
from nbgrader.utils import is_grade, is_solution

_CLEAR_HIDDEN = ClearHiddenTests(begin_test_delimeter="BEGIN HIDDEN TESTS", end_test_delimeter="END HIDDEN TESTS")
HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.DOTALL)
SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.DOTALL)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MIN_LENGTH = 8
PLACEHOLDER = "[hidden line]"
PRIORITY_ERRORS = ("CellTimeoutError", "DeadKernelError", "NotRun")


TOKEN_SHAPES = re.compile(
    r"\bhf_[A-Za-z0-9]{30,}\b"                       # Hugging Face
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"   # GitHub
    r"|\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b"             # OpenAI-style keys
    r"|\bAKIA[0-9A-Z]{16}\b"                             # AWS access key ids
    r"|\bya29\.[A-Za-z0-9_-]{20,}"                       # Google OAuth tokens
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*")
TOKEN_PLACEHOLDER = "[token removed]"


def radix_pattern(words: set[str]) -> str:
    """A regex matching any of ``words``, longest first at each position, as a radix tree.

    One alternation of a thousand literals makes ``re`` try every literal at every character
    (3.4 s over math_grpo's 0.8 MB feedback page); branching on shared prefixes tries only the
    literals that can still match (0.1 s), with the same matches."""
    def build(group: set[str]) -> str:
        by_first: dict[str, list[str]] = {}
        for word in group:
            if word:
                by_first.setdefault(word[0], []).append(word)
        branches = []
        for _, words_here in sorted(by_first.items()):
            prefix = os.path.commonprefix(words_here)
            branches.append(re.escape(prefix) + build({w[len(prefix):] for w in words_here}))
        if not branches:
            return ""
        if "" in group:  # a word ends here: the longer branches first, then the end (greedy `?`)
            return "(?:" + "|".join(branches) + ")?"
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(set(words))


def host_paths(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Grader folders that must not appear in what a student gets -> the label shown instead."""
    import sys
    import tempfile

    from autograder.manifest import REPO_ROOT

    found = {str(REPO_ROOT): "<course kit>", os.path.expanduser("~"): "<grader home>",
             tempfile.gettempdir(): "<tmp>"}
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        if prefix.count("/") >= 2 and prefix not in ("/usr/local", "/opt/conda"):  # not a system folder
            found[prefix] = "<python>"
    found.update(extra or {})
    return {path: label for path, label in found.items() if path and path != "/"}


class Scrubber:
    """Replaces secret lines, token-shaped strings and the grader's folders in text; built from
    the source (solutions) and release notebooks and the submission's own grading folders."""

    def __init__(self, lines: set[str], paths: dict[str, str] | None = None):
        self.lines = sorted(lines, key=len, reverse=True)
        self.pattern = _line_pattern(frozenset(lines))
        self.paths = sorted(host_paths(paths).items(), key=lambda item: -len(item[0]))

    def __call__(self, text: str) -> str:
        if not isinstance(text, str) or not text:
            return text
        if self.pattern:
            text = self.pattern.sub(PLACEHOLDER, text)
        text = TOKEN_SHAPES.sub(TOKEN_PLACEHOLDER, text)  # the last line of defence for credentials
        for path, label in self.paths:
            text = text.replace(path, label)
        return text

    def __bool__(self) -> bool:
        return True

    @classmethod
    def from_notebooks(cls, source: Path | None, release: Path | None, paths: dict[str, str] | None = None) -> Scrubber:
        """From ``<course>/source/<id>/<id>.ipynb``, its release, and the course's hidden tests of ``<id>``."""
        return cls(secret_lines(source, release) if source is not None and Path(source).exists() else set(), paths)


_PATTERNS: dict[frozenset, re.Pattern | None] = {}
_SECRETS: dict[tuple, frozenset] = {}
CACHE_SIZE = 16  # assignments: every submission of one assignment shares its lines and pattern


def _remember(cache: dict, key, value):
    if len(cache) >= CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def _line_pattern(lines: frozenset) -> re.Pattern | None:
    """The compiled pattern for ``lines`` (raw and HTML-escaped), compiled once per process
    (0.3-0.6 s for an assignment's thousand lines; the job server compiles it before it forks)."""
    if lines in _PATTERNS:
        return _PATTERNS[lines]
    variants = set()
    for line in lines:
        escaped = html.escape(line, quote=True)
        variants.update((line, escaped, html.escape(line, quote=False), escaped.replace("&#x27;", "&#39;")))
    return _remember(_PATTERNS, lines, re.compile(radix_pattern(variants)) if variants else None)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def _hidden_test_files(source: Path) -> list[Path]:
    """The hidden-test files of the course ``source`` (``<course>/source/<id>/<id>.ipynb``) belongs to."""
    from autograder.manifest import HIDDEN_TESTS

    folder = Path(source).resolve().parents[2] / HIDDEN_TESTS / Path(source).parent.name
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def _kernel_source(path: Path) -> str:
    from autograder.hidden_test_files import kernel_source

    try:
        return kernel_source(path.read_text(encoding="utf-8"), path.parent, roots=("probe", "measure_here"))
    except SyntaxError:
        return ""


def secret_lines(source: Path, release: Path | None) -> set[str]:
    """Lines of hidden regions and solution blocks (or solution cells) in the source notebook and
    of the hidden-test files; read once per process for the same files' contents."""
    source_bytes = Path(source).read_bytes()
    release_bytes = Path(release).read_bytes() if release is not None and Path(release).exists() else b""
    files = _hidden_test_files(source)
    tests = b"\0".join(p.read_bytes() for p in files)
    key = tuple(hashlib.blake2b(part).digest() for part in (source_bytes, release_bytes, tests))
    if key not in _SECRETS:
        probes = "\n".join(_kernel_source(p) for p in files)  # as the kernel got them (reformatted)
        _remember(_SECRETS, key, frozenset(_read_secret_lines(source_bytes, release_bytes, tests.decode() + probes)))
    return set(_SECRETS[key])


def _read_secret_lines(source_bytes: bytes, release_bytes: bytes, tests: str = "") -> set[str]:
    notebook = nbformat.reads(source_bytes.decode(), as_version=4)
    public = set()
    if release_bytes:
        for cell in nbformat.reads(release_bytes.decode(), as_version=4).cells:
            public.update(_lines(cell.get("source", "")))
    found = set()
    for cell in notebook.cells:
        text = cell.get("source", "")
        meta = cell.get("metadata", {}).get("nbgrader", {})
        chunks = [m.group(0) for m in HIDDEN_REGION.finditer(text)]
        chunks += [m.group(1) for m in SOLUTION_REGION.finditer(text)]
        if meta.get("solution") and cell.get("cell_type") == "markdown" and not chunks:
            chunks.append(text)
        for chunk in chunks:
            for line in _lines(chunk):
                if len(line) >= MIN_LENGTH and line not in public:
                    found.add(line)
    found.update(line for line in _lines(tests) if len(line) >= MIN_LENGTH and line not in public)
    return found


def error_line(output) -> str:
    name = output.get("ename", "Error")
    value = ANSI.sub("", str(output.get("evalue", ""))).strip()
    if len(value) > 300:
        value = value[:300] + " ..."
    return f"{name}: {value}" if value else name


def _scrub_output(output, scrub: Scrubber) -> None:
    kind = output.get("output_type")
    if kind == "stream":
        output["text"] = scrub(output.get("text", ""))
    elif kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        for mime, value in list(data.items()):
            if isinstance(value, str):
                data[mime] = scrub(value)
            elif isinstance(value, list):
                data[mime] = [scrub(v) if isinstance(v, str) else v for v in value]
    elif kind == "error":
        output["evalue"] = scrub(str(output.get("evalue", "")))
        output["traceback"] = [scrub(line) for line in output.get("traceback", [])]


def sanitize_autograded(path: Path, scrub: Scrubber | None = None) -> tuple[dict[str, str], set[str]]:
    """Hide test source and traceback lines, scrub secret lines from every output; collect each
    test's failure message. Returns ({grade_id: message}, names of the errors seen in any cell)."""
    scrub = scrub or Scrubber(set())
    notebook = nbformat.read(path, as_version=4)
    messages, enames = {}, set()
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        is_test = is_grade(cell) and cell.cell_type == "code" and not is_solution(cell)
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                enames.add(output.get("ename", ""))
                line = scrub(error_line(output))
                if output.get("ename") == "CellTimeoutError":
                    line = "CellTimeoutError: the check ran past the per-cell time limit"
                if is_test and (meta["grade_id"] not in messages or output.get("ename") in PRIORITY_ERRORS):
                    messages[meta["grade_id"]] = line
                output["traceback"] = [line]
            elif is_test and output.get("output_type") == "stream" and output.get("name") == "stderr":
                messages.setdefault(meta["grade_id"], "the check wrote to stderr (counted as a failure)")
            _scrub_output(output, scrub)
        if is_test and _CLEAR_HIDDEN._remove_hidden_test_region(cell):  # nbgrader's own, as in the release
            cell.source = (cell.source.rstrip("\n") + "\n# (hidden tests run here when grading)").lstrip("\n")
    nbformat.write(notebook, path)
    return messages, enames
