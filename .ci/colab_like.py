"""Colab-like check: the student release, installed the way a Colab notebook installs it.

1. ``python -m autograder release`` builds the release with a file:// install URL.
2. A fresh venv stands in for a Colab image: the packages Colab preinstalls, at Colab's
   versions where they differ from ours (googlecolab/backend-info 2026-08: transformers 5.15,
   peft 0.20, datasets 4.0, numpy 2.1, matplotlib 3.10). torch stays 2.13.0 CPU: Colab's
   torch 2.11 is a CUDA build, and only the local 2.13.0 CPU wheel avoids a multi-GB CUDA
   download here; it is preinstalled as hard links of the kit venv's installed files (what pip
   would unpack, in seconds instead of ~90 s). Python is this machine's (3.11; Colab runs 3.13).
3. The release notebook's own install cell runs there with a stand-in ``google.colab`` module
   and ``COLAB_GPU=1`` (a GPU runtime): it installs the wheel non-editable with whatever Colab
   lacks (math-verify, and bitsandbytes through the ``gpu`` extra), and must leave torch and
   Colab's versions alone.
4. Each release notebook runs in that venv, tiny profile, up to its first TODO cell.
5. ``r1_zero_reward_fn`` scores a correct tagged answer 1.0 there.
6. The laptop-like check (``.ci/laptop_like.py``) on the same release: a fresh venv, the student
   README's commands alone (CPU torch, the ``jupyter`` extra), no GPU-only package, every
   release notebook up to its first TODO with Jupyter's ``python3`` kernel.

Run by ``.ci/run`` with the kit's venv: ``.venv/bin/python .ci/colab_like.py``. Exits 1 with
the reason on the first failure; prints each step's seconds.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COLAB_PREINSTALLED = {
    "transformers": "5.15.0",
    "peft": "0.20.0",
    "datasets": "4.0.0",
    "numpy": "2.1.0",
    "matplotlib": "3.10.0",
}
"""Colab's versions (2026-08) of packages it ships and the kit declares; pinned in the stand-in."""
ALSO_PREINSTALLED = ["accelerate", "safetensors", "tqdm", "filelock", "pyyaml", "nbformat", "nbconvert",
                     "nbclient", "ipykernel", "packaging"]
"""Also on every Colab image (any recent version): Jupyter's pieces and transformers' companions.
Preinstalled with torch from the kit's venv (see :func:`preinstall`)."""
TORCH = "torch==2.13.0"
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg",
            "TOKENIZERS_PARALLELISM": "false"}

DRIVER = r'''
import json, sys, time
import nbformat
from nbclient import NotebookClient

path, workdir, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(path, as_version=4)
first_todo = next(i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": workdir}})
ran, setup_output = [], None
with client.setup_kernel():
    for index, cell in enumerate(nb.cells[:first_todo]):
        if cell.cell_type != "code":
            continue
        client.execute_cell(cell, index)  # raises CellExecutionError with the traceback
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        ran.append(grade_id)
        if grade_id == "setup":
            setup_output = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
print(json.dumps({"ran": ran, "first_todo": nb.cells[first_todo].metadata["nbgrader"]["grade_id"],
                  "setup_output": setup_output}))
'''

PROBE = r'''
import importlib.metadata as md, json, sys
import helpers
from helpers.math_tasks import r1_zero_reward_fn
print(json.dumps({
    "helpers": helpers.__file__,
    "reward": r1_zero_reward_fn(" 7 + 5 = 12 </think> <answer> 12 </answer>", "12")["reward"],
    "wrong": r1_zero_reward_fn(" 7 + 5 = 13 </think> <answer> 13 </answer>", "12")["reward"],
    "versions": {name: md.version(name) for name in sys.argv[1:]},
}))
'''


class CheckFailed(RuntimeError):
    pass


def preinstall(names: list[str], target_site: Path, skip=()) -> list[str]:
    """Put the kit venv's installed ``names`` and everything they require into ``target_site``
    as hard links of the files each distribution's RECORD lists: the same installed files pip
    would have unpacked (torch 2.13.0 takes ~90 s to unpack here, this takes seconds). Names in
    ``skip`` are left for pip (with what they require)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    done: dict[str, md.Distribution] = {}
    todo = list(names)
    skip = {n.lower().replace("_", "-") for n in skip}
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in done or name in skip:
            continue
        dist = md.distribution(name)
        done[name] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    for dist in done.values():
        for file in dist.files or []:
            if file.parts[0] == "..":  # console scripts outside site-packages
                continue
            source, target = Path(dist.locate_file(file)), target_site / file
            if not source.is_file():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
    return sorted(f"{d.metadata['Name']} {d.version}" for d in done.values())


def run(cmd, what: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise CheckFailed(f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result


def setup_cell(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    cell = next(c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
    return "".join(cell["source"])


def main() -> int:
    timings: dict[str, float] = {}
    scratch = Path(tempfile.mkdtemp(prefix="colab-like-"))
    # PYTHONDONTWRITEBYTECODE (set on some CI images, never on Colab) would make every notebook
    # recompile torch's modules: pip installs with --no-compile here, so the first import writes them
    clean_env = {k: v for k, v in os.environ.items()
                 if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COLAB_RELEASE_TAG", "PYTHONDONTWRITEBYTECODE")}
    clean_env.update(TINY_ENV)
    try:
        started = time.perf_counter()
        out = scratch / "release"
        run([sys.executable, "-m", "autograder", "release", "--out", out, "--install-url", f"file://{out}"],
            "python -m autograder release", cwd=REPO, env=clean_env)
        wheel = next((out / "dist").glob("*.whl"))
        timings["release"] = time.perf_counter() - started

        started = time.perf_counter()
        colab = scratch / "colab-venv"
        run([sys.executable, "-m", "venv", colab], "creating the venv")
        python = colab / "bin" / "python"
        pins = scratch / "colab-pins.txt"
        pins.write_text(f"{TORCH}\n" + "".join(f"{n}=={v}\n" for n, v in COLAB_PREINSTALLED.items()))
        site = next((colab / "lib").glob("python3*/site-packages"))
        linked = preinstall(["torch", *ALSO_PREINSTALLED], site, skip=COLAB_PREINSTALLED)
        shown = [d for d in linked if d.split()[0].lower() in ("torch", "accelerate", "ipykernel", "nbclient")]
        print(f"preinstalled as on Colab, from the kit's venv: {len(linked)} distributions incl. {', '.join(shown)}")
        run([python, "-m", "pip", "install", "-q", "--no-compile", "-c", pins,  # see laptop_like.as_run
             *(f"{n}=={v}" for n, v in COLAB_PREINSTALLED.items())],
            "installing Colab's versions of transformers, peft, datasets, numpy, matplotlib", env=clean_env)
        timings["colab image (torch + preinstalled)"] = time.perf_counter() - started

        started = time.perf_counter()
        cell = setup_cell(out / "notebooks" / "math_grpo" / "math_grpo.ipynb")
        fake = "import sys, types\nsys.modules['google.colab'] = types.ModuleType('google.colab')\n"
        installed = run([python, "-c", fake + cell], "the install cell on (stand-in) Colab", cwd=scratch,
                        env={**clean_env, "COLAB_GPU": "1"})  # a GPU runtime: the gpu extra too
        timings["install cell (wheel + missing deps)"] = time.perf_counter() - started
        lines = installed.stdout.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("course kit: installed course-kit-helpers") or \
                "with the GPU extras" not in lines[0]:
            raise CheckFailed(f"the install cell printed {lines!r}, expected one 'course kit: installed ... with the "
                              "GPU extras' line")
        print(f"install cell: {lines[0]}")

        names = ["torch", *COLAB_PREINSTALLED, "course-kit-helpers", "bitsandbytes", "math-verify"]
        probe = json.loads(run([python, "-c", PROBE, *names], "importing helpers from the wheel",
                               cwd=scratch, env=clean_env).stdout.strip().splitlines()[-1])
        versions = probe["versions"]
        if not versions["torch"].startswith("2.13.0"):
            raise CheckFailed(f"the install cell changed torch to {versions['torch']}")
        changed = {n: versions[n] for n, v in COLAB_PREINSTALLED.items() if versions[n] != v}
        if changed:
            raise CheckFailed(f"the install cell replaced Colab's preinstalled versions: {changed}")
        if not probe["helpers"].startswith(str(colab)):
            raise CheckFailed(f"helpers came from {probe['helpers']}, not from the installed wheel")
        if probe["reward"] != 1.0 or probe["wrong"] != 0.0:
            raise CheckFailed(f"r1_zero_reward_fn scored a correct answer {probe['reward']} and a wrong one "
                              f"{probe['wrong']}")
        print(f"versions: {', '.join(f'{k} {v}' for k, v in versions.items())}")
        print("r1_zero_reward_fn: correct tagged answer 1.0, wrong answer 0.0")

        driver = scratch / "driver.py"
        driver.write_text(DRIVER)
        for notebook in sorted((out / "notebooks").glob("*/*.ipynb")):
            started = time.perf_counter()
            workdir = scratch / "work" / notebook.parent.name
            shutil.copytree(notebook.parent, workdir)
            result = json.loads(run([python, driver, workdir / notebook.name, workdir, 600],
                                    f"running {notebook.name} up to its first TODO", cwd=workdir,
                                    env=clean_env).stdout.strip().splitlines()[-1])
            expected = f"course kit: course-kit-helpers {wheel.name.split('-')[1]} is installed"
            if (result["setup_output"] or "").strip() != expected:
                raise CheckFailed(f"{notebook.name}: the install cell printed {result['setup_output']!r}, "
                                  f"expected {expected!r}")
            timings[f"{notebook.stem} to its first TODO"] = time.perf_counter() - started
            print(f"{notebook.stem}: ran {', '.join(result['ran'])}; stopped before {result['first_todo']}")

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import laptop_like  # the student's own machine, from the README's commands alone

        try:
            laptop_like.check(out, scratch, timings)
        except laptop_like.CheckFailed as failure:
            raise CheckFailed(f"laptop-like: {failure}") from None
    except CheckFailed as failure:
        print(f"colab-like check FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("colab-like check passed: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
          + f"; total {sum(timings.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
