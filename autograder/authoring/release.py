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


def stamp_notebook(path: Path, url: str, version: str) -> bool:
    """Stamp the ``setup`` cell of the notebook at ``path`` in place and set its kernelspec and
    language_info; False when it has no setup cell with both lines (a notebook outside this kit)."""
    notebook = nbformat.read(path, as_version=4)
    changed = set_release_metadata(notebook)
    found = False
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == SETUP_CELL:
            if len(set(m.group(1) for m in _STAMPED_LINE.finditer(cell.source))) < 2:
                break
            found = True
            stamped = stamp_source(cell.source, url, version)
            if stamped != cell.source:
                cell.source, changed = stamped, True
            break
    if changed:
        nbformat.write(notebook, path)
    return found


def stamp_course_sources(course: Path, assignments: list[Assignment], url: str | None = None) -> None:
    """Stamp ``course/source/<id>/<id>.ipynb`` before nbgrader generates the releases, so the
    release, its locked-cell checksums and the grader's copy all carry the same install cell."""
    for assignment in assignments:
        root = assignment.source.parents[2]
        target = course / "source" / assignment.id / f"{assignment.id}.ipynb"
        stamp_notebook(target, install_url(root, url, allow_placeholder=True), kit_version(REPO_ROOT))


# --------------------------------------------------------------------------------------
# The wheel of `helpers`
# --------------------------------------------------------------------------------------


def runtime_dependencies(root: Path = REPO_ROOT) -> list[str]:
    """``[project] dependencies`` of the kit's pyproject.toml: the wheel declares the same."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project.get("dependencies", []))


STUDENT_EXTRAS = ("gpu", "jupyter")
"""Extras of the kit's pyproject.toml the wheel carries too: ``gpu`` (bitsandbytes, which only
works with a CUDA GPU: the Colab install cell asks for it on a GPU runtime) and ``jupyter``
(Jupyter and the ``python3`` kernel, which the student README installs on a laptop)."""


def student_extras(root: Path = REPO_ROOT) -> dict[str, list[str]]:
    """``[project.optional-dependencies]`` named in :data:`STUDENT_EXTRAS`."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return {name: list(extras.get(name, [])) for name in STUDENT_EXTRAS}


WHEEL_DESCRIPTION = ("Scaffolding the course notebooks import: environment, models, GRPO plumbing, math rewards, "
                     "Colab runtime, submission packing")


def _wheel_pyproject(version: str, dependencies: list[str], requires_python: str,
                     extras: dict[str, list[str]] | None = None) -> str:
    deps = "".join(f"    {json.dumps(d)},\n" for d in dependencies)
    optional = "".join(f"{name} = {json.dumps(items)}\n" for name, items in (extras or {}).items())
    return f'''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{DISTRIBUTION}"
version = "{version}"
description = {json.dumps(WHEEL_DESCRIPTION)}
requires-python = "{requires_python}"
readme = "README.md"
dependencies = [
{deps}]

[project.optional-dependencies]
{optional}
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
                                                             project.get("requires-python", ">=3.11"),
                                                             student_extras(root)))
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

Four Jupyter assignments. Each notebook installs or checks what it needs in its first cell.

| notebook | what you build | runs on |
| --- | --- | --- |
| `maxent_irl` | Maximum Entropy IRL on a gridworld | any CPU |
| `grpo_format` | GRPO with a format reward on Qwen2.5-0.5B-Instruct (LoRA) | Colab T4 GPU (CPU: tiny version) |
| `tiny_grpo` | a tiny model learns digit sorting with GRPO | CPU |
| `math_grpo` | GRPO on MATH with verified rewards | Colab T4 GPU (CPU: tiny version) |

## On Google Colab

1. *File → Open notebook → GitHub* (or *Upload*) and open `notebooks/<id>/<id>.ipynb`.
2. For `grpo_format` and `math_grpo`: *Runtime → Change runtime type → T4 GPU* before you start.
3. Run the first cell. It installs the course package `{distribution}` {version} from
   `{wheel_url}`
   (with bitsandbytes on a GPU runtime) and leaves Colab's own torch alone. It prints one line
   saying what it did.
4. Run the cell that mounts Google Drive. Adapters, checkpoints and your submission zip are
   saved in `My Drive/course-kit/<id>/`, so a runtime reset or disconnect loses nothing:
   training resumes from its last checkpoint when you run the cells again.
5. Fill the cells marked `# YOUR CODE HERE` and the written answers marked `YOUR ANSWER HERE`.
6. Run the last cell: `helpers.submission.pack("<id>")` puts the notebook and its `artifacts/`
   into one zip (`<id>_submission.zip`) and starts the download. Hand in that zip.

## On your own machine

No GPU needed: without one the notebooks run a *tiny* profile (a ~1 M-parameter model, seconds
to minutes on a laptop). You need Python 3.11 or newer. In a terminal, in this folder:

```bash
python3 -m venv .venv
source .venv/bin/activate
pip install torch --index-url {cpu_index}
pip install "{laptop_requirement}"
jupyter lab
```

On Windows run `py -3 -m venv .venv` and `.venv\\Scripts\\activate` instead of the first two lines.

- The first `pip install` gets the CPU build of torch (a few hundred MB; a plain
  `pip install torch` on Linux downloads the CUDA build, several GB a laptop cannot use).
- The second gets the course package with Jupyter (`[jupyter]`), so the notebooks' `python3`
  kernel is this environment's Python.
- `jupyter lab` opens in your browser: open `notebooks/<id>/<id>.ipynb` and run the cells from
  the top. The first cell should print `course kit: course-kit-helpers {version} is installed`.
- Linux with an NVIDIA GPU and its driver: `pip install torch` (the CUDA build) as the first
  install and `{distribution}[gpu,jupyter]` as the second (the `gpu` extra adds bitsandbytes
  for the 4-bit models).

Set `COURSE_PROFILE=tiny` to choose the tiny profile explicitly. Artifacts are written to
`artifacts/` next to the notebook; `python -c "from helpers import submission; submission.pack('<id>')"`
in the notebook's folder makes the zip.

## Before you hand in

`python -m helpers.submission notebooks/<id>/<id>.ipynb` (or `submission.check()` in the last
cell) says `ready to submit` only when every answer is filled in, the notebook has been run
and no cell ends in an error; it names each problem by the section heading above it and the
cell's first line. `tiny_grpo` is graded on its Markdown export, which must stay under 40,000
characters: the same check tells you where you stand.
"""


@dataclass
class ReleaseReport:
    out: Path
    notebooks: list[Path] = field(default_factory=list)
    wheel: Path | None = None
    url: str = ""
    requirement: str = ""
    changes: list[str] = field(default_factory=list)
    """What happened to what was already in ``out`` (replaced, removed, kept)."""

    def lines(self) -> list[str]:
        size = self.wheel.stat().st_size / 1e6 if self.wheel else 0.0
        return [
            *(f"notebook: {path.relative_to(self.out)}" for path in self.notebooks),
            f"wheel:    {self.wheel.relative_to(self.out)} ({size:.1f} MB)",
            "readme:   README.md",
            f"install:  {self.requirement}",
            *self.changes,
            f"publish {self.out} at {self.url} (the install cells fetch dist/ from there)",
        ]


MARKER = ".course-kit-release.json"
"""Written into ``--out``: the files the release wrote (with their sha256), so the next release
replaces those and nothing else."""


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _previous_files(out: Path) -> dict[str, str]:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        files = data.get("files", {})
        return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def plan_out(out: Path, staged: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(files of the previous release, lines) for writing ``staged`` (relative path -> sha256)
    into ``out``; ReleaseError, before anything is written, when ``out`` holds a file the release
    would overwrite that no release wrote."""
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out} is a file: give a folder (an empty one, a fresh clone of the release "
                           "repository, or one an earlier release wrote)")
    previous = _previous_files(out) if out.is_dir() else {}
    foreign = [rel for rel in staged if (out / rel).exists() and rel not in previous]
    if foreign:
        raise ReleaseError(f"--out {out} holds {', '.join(sorted(foreign)[:5])}, which the release would replace but "
                           f"did not write: nothing was written. Move {'it' if len(foreign) == 1 else 'them'} away "
                           "(the release keeps .git and every other file), or choose another --out")
    lines = []
    if out.is_dir():
        kept = sorted(p.name for p in out.iterdir() if p.name != MARKER and not any(
            rel == p.name or rel.startswith(f"{p.name}/") for rel in [*staged, *previous]))
        if kept:
            more = " ..." if len(kept) > 8 else ""
            lines.append(f"kept:     {', '.join(kept[:8])}{more} (not written by the release)")
        replaced = [rel for rel in staged if rel in previous and (out / rel).exists()]
        edited = [rel for rel in replaced if _digest(out / rel) != previous[rel]]
        if replaced:
            lines.append(f"replaced: {len(replaced)} file(s) of the previous release"
                         + (f", {', '.join(edited)} edited since then" if edited else ""))
        stale = sorted(rel for rel in previous if rel not in staged and (out / rel).is_file())
        if stale:
            lines.append(f"removed:  {', '.join(stale)} (written by the previous release, not part of this one)")
    return previous, lines


def write_out(staging: Path, out: Path) -> list[str]:
    """Copy the staged release into ``out``, replacing only the files a release wrote there;
    returns lines saying what was replaced, removed and kept."""
    staged = {p.relative_to(staging).as_posix(): _digest(p) for p in sorted(staging.rglob("*")) if p.is_file()}
    previous, lines = plan_out(out, staged)
    out.mkdir(parents=True, exist_ok=True)
    for rel in staged:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(staging / rel, out / rel)
    for rel in previous:
        if rel not in staged and (out / rel).is_file():
            (out / rel).unlink()
            parent = (out / rel).parent
            while parent != out and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    (out / MARKER).write_text(json.dumps({"written_by": "python -m autograder release", "files": staged}, indent=1)
                              + "\n", encoding="utf-8")
    return lines


def release(assignments: list[Assignment], out: Path, root: Path = REPO_ROOT, url: str | None = None,
            title: str = "Reward learning and RL for LLMs: assignments") -> ReleaseReport:
    """Build the student release into ``out``: only files an earlier release wrote there are
    replaced (a git clone's ``.git`` and anything else stay); ReleaseError, with nothing written,
    when an answer or a hidden test would leave the kit, the wheel holds more than ``helpers``,
    the install URL is a placeholder, or ``out`` holds a file the release did not write."""
    from autograder.authoring.course import new_course

    root, out = Path(root), Path(out)
    url = install_url(root, url)
    version = kit_version(REPO_ROOT)
    if not assignments:
        raise ReleaseError(f"no assignments under {root / 'solutions'}")
    if out.resolve() in (root.resolve(), *root.resolve().parents) or root.resolve() in out.resolve().parents:
        raise ReleaseError(f"--out {out} must be a folder outside the kit repository {root}")
    plan_out(out, {})  # a file given as --out stops here, before the minutes of building
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
            title=title, distribution=DISTRIBUTION, version=version, cpu_index=CPU_TORCH_INDEX,
            laptop_requirement=install_requirement(url, version, ("jupyter",)), wheel_url=f"{url}/dist/{wheel.name}"))
        problems = wheel_problems(wheel) + find_leaks(staging, protected_lines(root / "solutions"))
        if problems:
            shown = "\n  ".join(problems[:20])
            raise ReleaseError(f"the release would give away {len(problems)} protected item(s); nothing was "
                               f"written to {out}:\n  {shown}")
        report.changes = write_out(staging, out)
    return report
