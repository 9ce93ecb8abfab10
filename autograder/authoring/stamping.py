"""The one course setting (where students install from) and the install cell stamped with it.

Every release notebook starts with a locked install cell (grade_id ``setup``) whose
``KIT_URL``/``KIT_VERSION`` lines are stamped from ``course.toml`` and ``helpers.__version__``,
in the release and in the grader's course copies alike, so their locked-cell checksums agree.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nbformat

from autograder.authoring.runtimes import CalibrationError, calibration_record, measured_sentence, stamp_runtimes
from autograder.manifest import REPO_ROOT, Assignment

DISTRIBUTION = "course-kit-helpers"
"""Distribution name of the student wheel (the kit repository itself installs as ``course-kit``)."""
SETTINGS_FILE = "course.toml"
SETUP_CELL = "setup"
"""grade_id of the locked install cell every notebook starts with."""
SETUP_TEMPLATE = Path(__file__).resolve().parent / "templates" / "setup_cell.py"
"""The one install cell: ``generate`` writes it into every solution notebook that has a ``setup`` cell,
and ``python -m autograder new`` starts each notebook with it."""
_STAMPED_LINE = re.compile(r'^(KIT_VERSION|KIT_URL) = "[^"\n]*"[ \t]*$', re.MULTILINE)


class ReleaseError(RuntimeError):
    """The release cannot be built; the message says what to fix."""


# --------------------------------------------------------------------------------------
# The one course setting: where students install from
# --------------------------------------------------------------------------------------


def kit_version(root: Path = REPO_ROOT) -> str:
    """``helpers.__version__`` as written in ``root/helpers/__init__.py`` (not imported)."""
    text = (Path(root) / "helpers" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not match:
        raise ReleaseError(f"{root}/helpers/__init__.py has no line __version__ = \"X.Y.Z\"; add one")
    return match.group(1)


def settings_path(root: Path) -> Path:
    """``root/course.toml``, or this repository's when a course root (a test fixture) has none."""
    own = Path(root) / SETTINGS_FILE
    return own if own.exists() else REPO_ROOT / SETTINGS_FILE


def install_url(root: Path = REPO_ROOT, override: str | None = None, allow_placeholder: bool = False) -> str:
    """The URL the release is published at: ``override`` or ``[release] install_url``.

    A placeholder (:data:`PLACEHOLDER`) stops the release; ``allow_placeholder`` lets
    ``generate`` and grading stamp it anyway (nothing is published from them)."""
    if override is not None:
        url, source = override, "--install-url"
    else:
        path = settings_path(root)
        try:
            settings = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ReleaseError(f"cannot read {path} ({error}); it must hold "
                               '[release] install_url = "https://..."') from None
        url, source = settings.get("release", {}).get("install_url"), f"{path} [release] install_url"
    if not isinstance(url, str) or not re.match(r"^(https?|file)://\S+$", url):
        raise ReleaseError(f"{source} must be the http(s):// (or file://) URL the release is published at, got {url!r}")
    if placeholder(url) and not allow_placeholder:
        raise ReleaseError(f"{source} is still a placeholder ({url!r}, {placeholder(url)}): set it to the URL you "
                           "publish the release at, e.g. https://raw.githubusercontent.com/OWNER/REPO/main, or pass "
                           "--install-url")
    return url.rstrip("/")


PLACEHOLDER = re.compile(r"<[^<>]*>|\{[^{}]*\}|REPLACE[_-]?ME|CHANGE[_-]?ME|\bYOUR[_-]|"
                         r"://([^/]*\.)?example\.(com|org|net)(/|:|$)|://[^/]*\.(example|invalid)(/|:|$)", re.I)
"""What marks an install URL as not filled in yet: ``<you>``/``{owner}``, REPLACE_ME, CHANGE_ME,
``your-org``, and the reserved example domains (example.com/.org/.net, ``*.example``,
``*.invalid``)."""


def placeholder(url: str) -> str:
    """The placeholder part of ``url`` (what to replace), or '' for a real URL."""
    match = PLACEHOLDER.search(url)
    return f"{match.group(0).strip(':/')!r} marks a placeholder" if match else ""


def wheel_name(version: str) -> str:
    return f"{DISTRIBUTION.replace('-', '_')}-{version}-py3-none-any.whl"


def install_requirement(url: str, version: str, extras: tuple[str, ...] = ()) -> str:
    """What ``pip install`` gets: ``course-kit-helpers[<extras>] @ <url>/dist/<wheel>``."""
    wanted = f"[{','.join(extras)}]" if extras else ""
    return f"{DISTRIBUTION}{wanted} @ {url}/dist/{wheel_name(version)}"


CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's index of CPU-only builds: on Linux, plain ``pip install torch`` brings the CUDA
build and several GB of CUDA libraries a laptop cannot use."""


def stamp_source(source: str, url: str, version: str) -> str:
    """The install cell's source with its ``KIT_URL`` and ``KIT_VERSION`` lines set."""
    values = {"KIT_URL": url, "KIT_VERSION": version}
    return _STAMPED_LINE.sub(lambda m: f'{m.group(1)} = "{values[m.group(1)]}"', source)


KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "mimetype": "text/x-python", "file_extension": ".py",
                 "codemirror_mode": {"name": "ipython", "version": 3}, "pygments_lexer": "ipython3",
                 "nbconvert_exporter": "python"}
"""Notebook metadata every release carries: Jupyter, Colab and VS Code pick the Python kernel
from it, and ``nbconvert --to script`` writes a ``.py`` (not ``.txt``). No Python version: the
student's own Python fills it in on save."""


def set_release_metadata(notebook) -> bool:
    """Give ``notebook`` the release's kernelspec and language_info; True when it changed."""
    before = (dict(notebook.metadata.get("kernelspec", {})), dict(notebook.metadata.get("language_info", {})))
    notebook.metadata["kernelspec"] = {**KERNELSPEC}
    notebook.metadata["language_info"] = {**LANGUAGE_INFO}
    return before != (notebook.metadata["kernelspec"], notebook.metadata["language_info"])


def stamp_notebook(path: Path, url: str, version: str, runtime: str | None = None) -> bool:
    """Stamp the ``setup`` cell of the notebook at ``path`` in place and set its kernelspec and
    language_info, and its runtime spans with ``runtime`` (:mod:`autograder.authoring.runtimes`); False when it
    has no setup cell with both lines (a notebook outside this kit)."""
    notebook = nbformat.read(path, as_version=4)
    changed = set_release_metadata(notebook)
    found = False
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == SETUP_CELL:
            if not _is_install_cell(cell):
                break
            found = True
            stamped = stamp_source(cell.source, url, version)
            if stamped != cell.source:
                cell.source, changed = stamped, True
            break
    for cell in notebook.cells:  # the estimates of run time, replaced by the calibration's measurement
        stamped = stamp_runtimes(cell.source, runtime) if cell.cell_type == "markdown" else cell.source
        if stamped != cell.source:
            cell.source, changed = stamped, True
    if changed:
        nbformat.write(notebook, path)
    return found


def stamp_course_sources(course: Path, assignments: list[Assignment], url: str | None = None) -> None:
    """Stamp ``course/source/<id>/<id>.ipynb`` before nbgrader generates the releases, so the
    release, its locked-cell checksums and the grader's copy all carry the same install cell."""
    records: dict[Path, dict | None] = {}  # one read of each course's record, however many assignments
    for assignment in assignments:
        root = assignment.source.parents[2]
        target = course / "source" / assignment.id / f"{assignment.id}.ipynb"
        if settings_path(root) not in records:
            try:
                records[settings_path(root)] = calibration_record(settings_path(root))
            except CalibrationError as error:
                raise ReleaseError(str(error)) from None
        runtime = measured_sentence(records[settings_path(root)], assignment.id)
        stamp_notebook(target, install_url(root, url, allow_placeholder=True), kit_version(REPO_ROOT), runtime)


def _is_install_cell(cell) -> bool:
    """A cell with both stamped lines (``KIT_URL`` and ``KIT_VERSION``); another ``setup`` cell is not one."""
    return len(set(m.group(1) for m in _STAMPED_LINE.finditer(cell.source))) == 2


def setup_template() -> str:
    """The install cell's source, as every notebook carries it before stamping."""
    return SETUP_TEMPLATE.read_text(encoding="utf-8").rstrip("\n")


def sync_setup_cells(assignments: list[Assignment], check: bool) -> list[str]:
    """Give every solution's install cell (its ``setup`` cell, with ``KIT_URL`` and ``KIT_VERSION`` lines) the
    template's source; with ``check``, only name those that differ. Another ``setup`` cell is left alone."""
    template, stale = setup_template(), []
    for assignment in assignments:
        notebook = nbformat.read(assignment.source, as_version=4)
        cells = [c for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == SETUP_CELL
                 and _is_install_cell(c)]
        if not cells or cells[0].source == template:
            continue
        if check:
            stale.append(f"{assignment.source}: its setup cell differs from {SETUP_TEMPLATE.relative_to(REPO_ROOT)}")
        else:
            cells[0].source = template
            nbformat.write(notebook, assignment.source)
    return stale
