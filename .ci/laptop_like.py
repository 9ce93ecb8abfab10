"""Laptop-like check: the student release on a student's own machine, from its README alone.

1. ``python -m autograder release`` builds the release with a file:// install URL (or
   ``--release DIR`` reuses one).
2. A fresh venv with nothing in it; then the ``pip install`` lines of the release README's
   "On your own machine" block, as written, except that PyTorch's CPU index (not reachable from
   CI) is stood in for by the same CPU wheel found locally (pip's find-links): torch's own
   dependencies still come from the package index, the rest of the line is the README's.
3. What a laptop must (not) have: a CPU torch, no CUDA packages (nvidia-*, triton), no
   bitsandbytes (GPU only: the ``gpu`` extra), Jupyter and ipykernel (the ``python3`` kernel).
4. Each release notebook runs in that venv with kernel ``python3`` as Jupyter there finds it
   (a fresh HOME, so no kernel of this machine's user can stand in), tiny profile, up to its
   first code TODO (so ``tiny_grpo``'s model cell runs): the install cell must say the kit is
   installed, no output may mention bitsandbytes, and the kernel must be the venv's Python.

Run by ``.ci/colab_like.py`` after the Colab-like check (so CI runs both), or alone:
``.venv/bin/python .ci/laptop_like.py``. Exits 1 with the reason on the first failure; prints
each step's seconds.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg",
            "TOKENIZERS_PARALLELISM": "false"}
GPU_ONLY = re.compile(r"^(nvidia-.*|triton|bitsandbytes)$", re.IGNORECASE)

DRIVER = r'''
import json, sys
import nbformat
from nbclient import NotebookClient

path, workdir, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(path, as_version=4)
first_todo = next(i for i, c in enumerate(nb.cells)  # the first code TODO: written answers do not stop a run
                  if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution"))
client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": workdir}})
ran, setup_output, texts = [], None, []
with client.setup_kernel():
    for index, cell in enumerate(nb.cells[:first_todo]):
        if cell.cell_type != "code":
            continue
        client.execute_cell(cell, index)  # raises CellExecutionError with the traceback
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        ran.append(grade_id)
        streams = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        texts.append(streams + "".join(json.dumps(o.get("data", {})) for o in cell.outputs))
        if grade_id == "setup":
            setup_output = streams
    probe = nbformat.v4.new_code_cell("import sys; print(sys.executable)")
    nb.cells.append(probe)
    client.execute_cell(probe, len(nb.cells) - 1)
print(json.dumps({"ran": ran, "first_todo": nb.cells[first_todo].metadata["nbgrader"]["grade_id"],
                  "setup_output": setup_output, "texts": texts,
                  "kernel_python": "".join(o.get("text", "") for o in probe.outputs).strip()}))
'''


class CheckFailed(RuntimeError):
    pass


def run(cmd, what: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise CheckFailed(f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result


def readme_commands(readme: str) -> list[str]:
    """The ``pip install`` lines of the README's "On your own machine" code block, in order."""
    section = readme.split("## On your own machine", 1)
    if len(section) < 2:
        raise CheckFailed("the release README has no '## On your own machine' section")
    block = re.search(r"```bash\n(.*?)```", section[1], re.DOTALL)
    if block is None:
        raise CheckFailed("the release README's 'On your own machine' section has no ```bash block")
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    commands = [line for line in lines if line.startswith("pip install")]
    if not commands or not any(CPU_INDEX in c for c in commands):
        raise CheckFailed(f"the README's commands install no torch from {CPU_INDEX}: {commands}")
    return commands


def local_cpu_torch() -> Path | None:
    """A CPU build of the kit's torch version in pip's find-links folders (this machine's stand-in
    for PyTorch's CPU index), for this Python."""
    import importlib.metadata as md

    version = md.version("torch").split("+")[0]
    folders = [p for p in os.environ.get("PIP_FIND_LINKS", "").split() if p]
    configured = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                                capture_output=True, text=True).stdout.split()
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    for folder in [*folders, *configured]:
        folder = folder.removeprefix("file://")
        found = sorted(Path(folder).glob(f"torch-{version}+cpu-{tag}-{tag}-*linux*_x86_64.whl")) if Path(
            folder).is_dir() else []
        if found:
            return found[-1]
    return None


def as_run(command: str, python: Path, wheel: Path | None) -> list[str]:
    """A README line as an argument list for the venv's pip; the CPU index line installs
    ``wheel`` instead when one was found here."""
    import shlex

    words = shlex.split(command)[2:]  # after "pip install"
    if CPU_INDEX in words and wheel is not None:
        at = words.index(CPU_INDEX)
        words = [w for i, w in enumerate(words) if i not in (at - 1, at) and w != "torch"] + [str(wheel)]
    # --no-compile: pip would byte-compile every module of torch, transformers and jupyterlab (most of
    # this check's CPU time, taken from the suite running beside it in CI); Python compiles the
    # modules the notebooks import when they import them, as it does for a student
    return [str(python), "-m", "pip", "install", "-q", "--no-compile", *words]


def check(out: Path, scratch: Path, timings: dict) -> None:
    """Steps 2-4 on the release in ``out``; CheckFailed on the first problem."""
    # without PYTHONDONTWRITEBYTECODE (see colab_like.main): the first import of a module writes its .pyc
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COLAB_RELEASE_TAG",
                                                                   "PYTHONDONTWRITEBYTECODE",
                                                                   "JUPYTER_PATH", "JUPYTER_DATA_DIR", "COLAB_GPU")}
    started = time.perf_counter()
    laptop = scratch / "laptop-venv"
    run([sys.executable, "-m", "venv", laptop], "creating the laptop venv")
    python = laptop / "bin" / "python"
    wheel = local_cpu_torch()
    commands = readme_commands((out / "README.md").read_text())
    for command in commands:
        run(as_run(command, python, wheel), f"the README's `{command}`", cwd=out, env=clean_env)
    timings["laptop: the README's pip installs"] = time.perf_counter() - started
    print(f"laptop: ran {len(commands)} README command(s) in a fresh venv"
          + (f" (CPU index stood in for by {wheel.name})" if wheel else ""))

    listed = json.loads(run([python, "-m", "pip", "list", "--format", "json"], "pip list", env=clean_env).stdout)
    versions = {item["name"].lower(): item["version"] for item in listed}
    gpu_only = sorted(name for name in versions if GPU_ONLY.match(name))
    if gpu_only:
        raise CheckFailed(f"the laptop install holds GPU-only packages: {', '.join(gpu_only)}")
    if "torch" not in versions or (wheel is not None and "+cpu" not in versions["torch"]):
        raise CheckFailed(f"the laptop install's torch is {versions.get('torch')!r}, not the CPU build")
    missing = [name for name in ("course-kit-helpers", "jupyterlab", "ipykernel") if name not in versions]
    if missing:
        raise CheckFailed(f"the README's commands did not install {', '.join(missing)}")
    print(f"laptop: torch {versions['torch']}, jupyterlab {versions['jupyterlab']}, ipykernel {versions['ipykernel']};"
          " no nvidia-*, triton or bitsandbytes")

    home = scratch / "laptop-home"  # no kernel of this machine's user may stand in for the venv's
    home.mkdir()
    env = {**clean_env, **TINY_ENV, "HOME": str(home), "VIRTUAL_ENV": str(laptop),
           "PATH": f"{laptop / 'bin'}{os.pathsep}{clean_env.get('PATH', '')}"}
    driver = scratch / "laptop_driver.py"
    driver.write_text(DRIVER)
    version = versions["course-kit-helpers"]
    for notebook in sorted((out / "notebooks").glob("*/*.ipynb")):
        started = time.perf_counter()
        workdir = scratch / "laptop-work" / notebook.parent.name
        shutil.copytree(notebook.parent, workdir)
        result = json.loads(run([python, driver, workdir / notebook.name, workdir, 600],
                                f"running {notebook.name} on the laptop up to its first code TODO", cwd=workdir,
                                env=env).stdout.strip().splitlines()[-1])
        expected = f"course kit: course-kit-helpers {version} is installed"
        if (result["setup_output"] or "").strip() != expected:
            raise CheckFailed(f"{notebook.name}: the install cell printed {result['setup_output']!r}, "
                              f"expected {expected!r}")
        if Path(result["kernel_python"]).parent != python.parent:
            raise CheckFailed(f"{notebook.name}: kernel python3 ran {result['kernel_python']}, not the venv's Python")
        noisy = [text for text in result["texts"] if "bitsandbytes" in text.lower()]
        if noisy:
            raise CheckFailed(f"{notebook.name}: an output mentions bitsandbytes: {noisy[0][:300]!r}")
        timings[f"laptop: {notebook.stem} to its first code TODO"] = time.perf_counter() - started
        print(f"laptop: {notebook.stem}: ran {', '.join(result['ran'])}; stopped before {result['first_todo']}")


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, help="a release folder to use instead of building one")
    args = parser.parse_args()
    timings: dict[str, float] = {}
    scratch = Path(tempfile.mkdtemp(prefix="laptop-like-"))
    try:
        out = args.release
        if out is None:
            started = time.perf_counter()
            out = scratch / "release"
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
            run([sys.executable, "-m", "autograder", "release", "--out", out, "--install-url", f"file://{out}"],
                "python -m autograder release", cwd=REPO, env={**env, **TINY_ENV})
            timings["release"] = time.perf_counter() - started
        check(out.resolve(), scratch, timings)
    except CheckFailed as failure:
        print(f"laptop-like check FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("laptop-like check passed: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
          + f"; total {sum(timings.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
