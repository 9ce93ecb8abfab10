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
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.authoring.course import new_course
from autograder.authoring.leaks import find_leaks, protected_lines
from autograder.authoring.stamping import (
    CPU_TORCH_INDEX,
    DISTRIBUTION,
    ReleaseError,
    install_requirement,
    install_url,
    kit_version,
)
from autograder.authoring.wheel import build_wheel, wheel_problems
from autograder.manifest import REPO_ROOT, Assignment

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
            *([f"warning: {self.url} is this project's own published release, not yours: set [release] install_url "
               "in course.toml to where you publish, then generate and release again"]
              if self.url.rstrip("/") == PROJECT_URL else []),
        ]


PROJECT_URL = "https://raw.githubusercontent.com/course-kit/rl-for-llms-release/main"
"""This project's own published release (the value course.toml ships with): a course of its own publishes elsewhere."""
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
