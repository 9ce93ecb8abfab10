"""The shipped tiny model: where it is, and the manifest that pins its weights.

The tiny profile runs every GRPO notebook on a CPU with a Qwen2-architecture model of under a
million parameters. Its weights ship with the kit in ``helpers/assets/tiny-qwen2/`` (a normal
``save_pretrained`` folder plus ``course_kit_model.json``), so every machine loads the very same
model and loading never trains::

    python -m helpers.tiny_model verify           # check the shipped files against the manifest
    python -m helpers.tiny_model info             # print the manifest

Building it is a maintainer's step that lives outside what students install:
``python -m tools.tiny_model_builder build`` (see docs/AUTHORING.md).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

TINY_MODEL_ID = "course-kit/tiny-qwen2"
"""The name the tiny model goes by in adapters and manifests (it lives on no hub)."""
ASSET_DIR = Path(__file__).resolve().parent / "assets" / "tiny-qwen2"
MANIFEST = "course_kit_model.json"
WEIGHTS = "model.safetensors"
HASHED_FILES = ("model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")


class TinyModelError(RuntimeError):
    """The shipped tiny model is missing or does not match its manifest."""


def sha256_file(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def read_manifest(folder: str | Path = ASSET_DIR) -> dict:
    path = Path(folder) / MANIFEST
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise TinyModelError(f"the tiny model's manifest {path} is missing: {_RESTORE_HINT}") from None
    except json.JSONDecodeError as error:
        raise TinyModelError(f"the tiny model's manifest {path} is not valid JSON ({error}): {_RESTORE_HINT}") from None


_RESTORE_HINT = ("restore the shipped files with `git checkout -- helpers/assets/tiny-qwen2` (a clone of the kit) "
                 "or reinstall the course package (`pip install --force-reinstall --no-deps <course package>`)")
_verified: dict[Path, str] = {}


def verify(folder: str | Path = ASSET_DIR) -> str:
    """Check every shipped file against the manifest's sha256; return the weights' hash.

    Raises :class:`TinyModelError` with one line naming the file and how to restore it.
    Verified once per process (hashing 3.4 MB takes milliseconds, but loading happens often).
    """
    folder = Path(folder).resolve()
    if folder in _verified:
        return _verified[folder]
    manifest = read_manifest(folder)
    for name, expected in manifest.get("sha256", {}).items():
        path = folder / name
        if not path.exists():
            raise TinyModelError(f"the tiny model file {path} is missing: {_RESTORE_HINT}")
        actual = sha256_file(path)
        if actual != expected:
            raise TinyModelError(
                f"the tiny model file {path} does not match its manifest (sha256 {actual[:12]}…, expected "
                f"{expected[:12]}…): it was changed or damaged; {_RESTORE_HINT}")
    _verified[folder] = manifest["sha256"][WEIGHTS]
    return _verified[folder]


def identity(folder: str | Path = ASSET_DIR) -> str:
    """The base-model identity adapters record: the model id and the weights' hash."""
    return f"{TINY_MODEL_ID}@sha256:{verify(folder)[:16]}"


def path() -> Path:
    """The shipped tiny model's folder, verified; what ``from_pretrained`` loads in the tiny profile."""
    verify(ASSET_DIR)
    return ASSET_DIR


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.tiny_model", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("verify", help="check the shipped files against the manifest")
    sub.add_parser("info", help="print the manifest")
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            print(f"ok: {ASSET_DIR} matches its manifest ({identity()})")
        else:
            print(json.dumps(read_manifest(), indent=2))
    except TinyModelError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
