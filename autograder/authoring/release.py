"""The student release: what an instructor publishes while the kit itself stays private.

``python -m autograder release --out DIR`` writes

* ``DIR/notebooks/<id>/<id>.ipynb``: the release notebooks, generated from ``solutions/`` by
  nbgrader (answers and hidden tests removed), each install cell stamped with the course's
  install URL and the kit's version;
* ``DIR/dist/course_kit_helpers-<version>-py3-none-any.whl``: a wheel of the ``helpers``
  package alone, under its own distribution name (``course-kit-helpers``), with the kit's
  runtime dependencies and its package data (prompts, fixtures, the tiny model's weights). No
  ``autograder/``, no ``solutions/``, no sample definitions;
* ``DIR/README.md``: how students open, run and submit the notebooks.

Publish DIR (for example as a public repository) at the URL set in ``course.toml``
(``[release] install_url``): on Colab the install cell installs
``<install_url>/dist/<wheel>`` from there. Before anything is written out, every line of every
solution block and hidden-test block of ``solutions/`` is searched for in DIR and inside the
wheel; a match stops the release.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.manifest import REPO_ROOT, Assignment

DISTRIBUTION = "course-kit-helpers"
"""Distribution name of the student wheel (the kit repository itself installs as ``course-kit``)."""
SETTINGS_FILE = "course.toml"
SETUP_CELL = "setup"
"""grade_id of the locked install cell every notebook starts with."""
LEAK_MIN_CHARS = 20
"""Solution / hidden-test lines shorter than this (``return x``, ``pass``) are not searched for."""

BLOCKS = (("### BEGIN SOLUTION", "### END SOLUTION"), ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"))
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


def install_url(root: Path = REPO_ROOT, override: str | None = None) -> str:
    """The URL the release is published at: ``override`` or ``[release] install_url``."""
    if override is not None:
        url, source = override, "--install-url"
    else:
        path = settings_path(root)
        try:
            settings = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ReleaseError(f"cannot read {path} ({error}); it must hold [release] install_url = \"https://...\"") from None
        url, source = settings.get("release", {}).get("install_url"), f"{path} [release] install_url"
    if not isinstance(url, str) or not re.match(r"^(https?|file)://\S+$", url) or "REPLACE_ME" in url:
        raise ReleaseError(f"{source} must be the http(s):// (or file://) URL the release is published at, got {url!r}")
    return url.rstrip("/")


def wheel_name(version: str) -> str:
    return f"{DISTRIBUTION.replace('-', '_')}-{version}-py3-none-any.whl"


def install_requirement(url: str, version: str) -> str:
    """What ``pip install`` gets on Colab: ``course-kit-helpers @ <url>/dist/<wheel>``."""
    return f"{DISTRIBUTION} @ {url}/dist/{wheel_name(version)}"


def stamp_source(source: str, url: str, version: str) -> str:
    """The install cell's source with its ``KIT_URL`` and ``KIT_VERSION`` lines set."""
    values = {"KIT_URL": url, "KIT_VERSION": version}
    return _STAMPED_LINE.sub(lambda m: f'{m.group(1)} = "{values[m.group(1)]}"', source)


def stamp_notebook(path: Path, url: str, version: str) -> bool:
    """Stamp the ``setup`` cell of the notebook at ``path`` in place; False when it has none
    with both lines (a notebook outside this kit)."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == SETUP_CELL:
            if len(set(m.group(1) for m in _STAMPED_LINE.finditer(cell.source))) < 2:
                return False
            stamped = stamp_source(cell.source, url, version)
            if stamped != cell.source:
                cell.source = stamped
                nbformat.write(notebook, path)
            return True
    return False


def stamp_course_sources(course: Path, assignments: list[Assignment], url: str | None = None) -> None:
    """Stamp ``course/source/<id>/<id>.ipynb`` before nbgrader generates the releases, so the
    release, its locked-cell checksums and the grader's copy all carry the same install cell."""
    for assignment in assignments:
        root = assignment.source.parents[2]
        target = course / "source" / assignment.id / f"{assignment.id}.ipynb"
        stamp_notebook(target, install_url(root, url), kit_version(REPO_ROOT))


# --------------------------------------------------------------------------------------
# The wheel of `helpers`
# --------------------------------------------------------------------------------------


def runtime_dependencies(root: Path = REPO_ROOT) -> list[str]:
    """``[project] dependencies`` of the kit's pyproject.toml: the wheel declares the same."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project.get("dependencies", []))


def _wheel_pyproject(version: str, dependencies: list[str], requires_python: str) -> str:
    deps = "".join(f"    {json.dumps(d)},\n" for d in dependencies)
    return f'''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{DISTRIBUTION}"
version = "{version}"
description = "Scaffolding the course notebooks import: environment, models, GRPO plumbing, math rewards, Colab runtime, submission packing"
requires-python = "{requires_python}"
readme = "README.md"
dependencies = [
{deps}]

[tool.setuptools]
packages.find.include = ["helpers*"]
include-package-data = true

[tool.setuptools.package-data]
"*" = ["**/*"]
'''


def build_wheel(out_dir: Path, root: Path = REPO_ROOT) -> Path:
    """Build ``out_dir/course_kit_helpers-<version>-py3-none-any.whl`` from a copy of
    ``root/helpers`` (caches and compiled files left out) and a generated pyproject.toml."""
    root = Path(root)
    version = kit_version(root)
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="helpers-wheel-") as scratch:
        src = Path(scratch) / "src"
        shutil.copytree(root / "helpers", src / "helpers",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.lock"))
        (src / "pyproject.toml").write_text(_wheel_pyproject(version, runtime_dependencies(root),
                                                             project.get("requires-python", ">=3.11")))
        (src / "README.md").write_text(
            "# course-kit-helpers\n\nThe `helpers` package imported by the course notebooks. Install it from the "
            "course's release (the first cell of every notebook does that on Colab).\n")
        build = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", str(Path(scratch) / "wheel"), str(src)],
            capture_output=True, text=True,
        )
        built = list((Path(scratch) / "wheel").glob("*.whl"))
        if build.returncode != 0 or len(built) != 1:
            raise ReleaseError(f"building the helpers wheel failed:\n{build.stdout[-2000:]}{build.stderr[-2000:]}")
        target = out_dir / wheel_name(version)
        if built[0].name != target.name:
            raise ReleaseError(f"the wheel came out as {built[0].name}, expected {target.name}")
        shutil.copy(built[0], target)
    return target


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


FORBIDDEN_IN_WHEEL = ("autograder/", "solutions/", "samples/", "tests/")


def wheel_problems(wheel: Path) -> list[str]:
    """Members of the wheel that are not the ``helpers`` package or its metadata."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    problems = [f"{wheel.name} holds {name}" for name in names
                if not (name.startswith("helpers/") or ".dist-info/" in name)
                or any(part in name for part in FORBIDDEN_IN_WHEEL)]
    if not any(name == "helpers/__init__.py" for name in names):
        problems.append(f"{wheel.name} has no helpers/__init__.py")
    return problems


# --------------------------------------------------------------------------------------
# The release folder
# --------------------------------------------------------------------------------------


STUDENT_README = """# {title}

Four Jupyter assignments. Each notebook installs what it needs in its first cell.

| notebook | what you build | runs on |
| --- | --- | --- |
| `maxent_irl` | Maximum Entropy IRL on a gridworld | any CPU |
| `grpo_format` | GRPO with a format reward on Qwen2.5-0.5B-Instruct (LoRA) | Colab T4 GPU (CPU: tiny practice version) |
| `tiny_grpo` | a tiny model learns digit sorting with GRPO | CPU |
| `math_grpo` | GRPO on MATH with verified rewards | Colab T4 GPU (CPU: tiny practice version) |

## On Google Colab

1. *File → Open notebook → GitHub* (or *Upload*) and open `notebooks/<id>/<id>.ipynb`.
2. For `grpo_format` and `math_grpo`: *Runtime → Change runtime type → T4 GPU* before you start.
3. Run the first cell. It installs the course package `{distribution}` {version} from
   `{wheel_url}`
   and leaves Colab's own torch alone. It prints one line saying what it did.
4. Run the cell that mounts Google Drive. Adapters, checkpoints and your submission zip are
   saved in `My Drive/course-kit/<id>/`, so a runtime reset or disconnect loses nothing:
   training resumes from its last checkpoint when you run the cells again.
5. Fill the cells marked `# YOUR CODE HERE` and the written answers marked `YOUR ANSWER HERE`.
6. Run the last cell: `helpers.submission.pack("<id>")` puts the notebook and its `artifacts/`
   into one zip (`<id>_submission.zip`) and starts the download. Hand in that zip.

## On your own machine

Python 3.11 or newer, in a virtual environment:

```bash
pip install torch            # the build for your machine (CPU is fine)
pip install "{requirement}"
```

Then open the notebook with Jupyter in that environment. Without a GPU the notebooks run a
*tiny* profile (a ~1 M-parameter model, seconds to minutes on a laptop); set
`COURSE_PROFILE=tiny` to choose it explicitly. Artifacts are written to `artifacts/` next to
the notebook; `python -c "from helpers import submission; submission.pack('<id>')"` in the
notebook's folder makes the zip.

`tiny_grpo` is graded on its Markdown export, which must stay under 40,000 characters:
`submission.check()` (last cell) tells you where you stand.
"""


@dataclass
class ReleaseReport:
    out: Path
    notebooks: list[Path] = field(default_factory=list)
    wheel: Path | None = None
    url: str = ""
    requirement: str = ""

    def lines(self) -> list[str]:
        size = self.wheel.stat().st_size / 1e6 if self.wheel else 0.0
        return [
            *(f"notebook: {path.relative_to(self.out)}" for path in self.notebooks),
            f"wheel:    {self.wheel.relative_to(self.out)} ({size:.1f} MB)",
            f"readme:   README.md",
            f"install:  {self.requirement}",
            f"publish {self.out} at {self.url} (the install cells fetch dist/ from there)",
        ]


def release(assignments: list[Assignment], out: Path, root: Path = REPO_ROOT, url: str | None = None,
            title: str = "Reward learning and RL for LLMs: assignments") -> ReleaseReport:
    """Build the student release into ``out`` (replaced if it exists); ReleaseError when an
    answer or a hidden test would leave the kit, or the wheel holds more than ``helpers``."""
    from autograder.authoring.course import new_course

    root, out = Path(root), Path(out)
    url = install_url(root, url)
    version = kit_version(REPO_ROOT)
    if not assignments:
        raise ReleaseError(f"no assignments under {root / 'solutions'}")
    if out.resolve() in (root.resolve(), *root.resolve().parents) or root.resolve() in out.resolve().parents:
        raise ReleaseError(f"--out {out} must be a folder outside the kit repository {root}")
    with tempfile.TemporaryDirectory(prefix="release-") as scratch:
        staging = Path(scratch) / "release"
        course = new_course(assignments, where=Path(scratch), install_url=url)
        report = ReleaseReport(out=out, url=url, requirement=install_requirement(url, version))
        for assignment in assignments:
            target = staging / "notebooks" / assignment.id
            shutil.copytree(course / "release" / assignment.id, target,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
            report.notebooks.append(out / "notebooks" / assignment.id / f"{assignment.id}.ipynb")
        wheel = build_wheel(staging / "dist", REPO_ROOT)
        report.wheel = out / "dist" / wheel.name
        (staging / "README.md").write_text(STUDENT_README.format(
            title=title, distribution=DISTRIBUTION, version=version, requirement=report.requirement,
            wheel_url=f"{url}/dist/{wheel.name}"))
        problems = wheel_problems(wheel) + find_leaks(staging, protected_lines(root / "solutions"))
        if problems:
            shown = "\n  ".join(problems[:20])
            raise ReleaseError(f"the release would give away {len(problems)} protected item(s); nothing was "
                               f"written to {out}:\n  {shown}")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, out)
    return report
