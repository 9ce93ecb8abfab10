"""Save a training run every few steps and pick it up where it stopped.

A Colab runtime can disconnect or reset in the middle of a 30-minute run. With a checkpoint
folder on Google Drive (see :func:`helpers.runtime.artifacts_dir`), running the training cell
again continues from the last saved step instead of from zero::

    from helpers import checkpoint
    ckpt = checkpoint.for_assignment("grpo_format", every=10)   # <artifacts>/checkpoints/train
    state = ckpt.resume(model, optimizer, scheduler, rngs={"steps": step_rng})
    history = state.history                                      # [] on a fresh start
    for step in range(state.step, CFG.steps):
        ...                                                      # one training step
        history.append({"step": step + 1, "reward": reward})
        ckpt.maybe_save(step + 1, model, optimizer, scheduler, history, rngs={"steps": step_rng})

What a checkpoint holds (folder ``step-000040/``):

* ``adapter/``: the LoRA adapter, written by :func:`helpers.lm.save_adapter` (with the manifest
  naming its base model); for a model without peft, ``model.safetensors`` with its state dict;
* ``trainer.pt``: the optimizer's and the scheduler's state, and the random states of Python,
  NumPy, torch (CPU and every CUDA device) and of the generators passed as ``rngs``;
* ``state.json``: the step, the history list, ``extra``, and the size and SHA-256 of every file.

Each checkpoint is written into a hidden ``.partial-*`` folder and renamed into place only when
complete, so an interrupted save never replaces a good checkpoint. On resume, a checkpoint
whose files are missing, truncated or altered (or that belongs to another base model) is
skipped with one printed line, and the previous one is used. The ``keep`` newest checkpoints
are kept. ``resume`` restores the weights *into* the given model (the optimizer's references to
its parameters stay valid) and, with the random states restored, the continued run reproduces
the uninterrupted one on the same machine.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.runtime import shown_path as _shown

FORMAT = 1
"""Version of the checkpoint layout written here."""
STEP_PATTERN = re.compile(r"^step-(\d{6,})$")


@dataclasses.dataclass
class Resume:
    """Where training continues: ``range(state.step, n_steps)``."""

    step: int = 0
    """Number of steps already done (0 on a fresh start)."""
    history: list = dataclasses.field(default_factory=list)
    """The history list saved with the checkpoint (a new empty list on a fresh start)."""
    extra: dict = dataclasses.field(default_factory=dict)
    """The ``extra`` dict saved with the checkpoint."""
    path: Path | None = None
    """The checkpoint folder resumed from, or None."""


class CheckpointError(ValueError):
    """Bad arguments to the checkpointer; the message says what was wrong."""


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _is_peft(model) -> bool:
    return hasattr(model, "peft_config") and hasattr(model, "get_base_model")


def _jsonable(value):
    """Numbers held in numpy / torch scalars become plain numbers; anything else is an error."""
    if hasattr(value, "item") and callable(value.item):
        try:
            return value.item()
        except (ValueError, RuntimeError):
            pass
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(type(value).__name__)


# --------------------------------------------------------------------------------------
# Random states
# --------------------------------------------------------------------------------------


def _global_rng_state() -> dict:
    import torch

    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    try:
        import numpy as np

        kind, keys, pos, has_gauss, cached = np.random.get_state()
        state["numpy"] = {"kind": kind, "keys": torch.from_numpy(keys.astype("int64")), "pos": int(pos),
                          "has_gauss": int(has_gauss), "cached": float(cached)}
    except ImportError:
        pass
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_global_rng_state(state: dict) -> None:
    import torch

    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "numpy" in state:
        import numpy as np

        saved = state["numpy"]
        np.random.set_state((saved["kind"], saved["keys"].numpy().astype("uint32"), saved["pos"],
                             saved["has_gauss"], saved["cached"]))
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])


def _generator_state(name: str, rng) -> tuple[str, Any]:
    import torch

    if isinstance(rng, random.Random):
        return "python", rng.getstate()
    if isinstance(rng, torch.Generator):
        return "torch", rng.get_state()
    if hasattr(rng, "bit_generator"):  # numpy.random.Generator
        return "numpy", json.dumps(rng.bit_generator.state)
    raise CheckpointError(f"rngs[{name!r}] is a {type(rng).__name__}; pass random.Random, torch.Generator or "
                          "numpy.random.Generator objects")


def _set_generator_state(rng, kind: str, value) -> None:
    if kind == "python":
        rng.setstate(value)
    elif kind == "torch":
        rng.set_state(value)
    else:
        rng.bit_generator.state = json.loads(value)


# --------------------------------------------------------------------------------------
# The checkpointer
# --------------------------------------------------------------------------------------


def _known_keywords(given: dict, method: str, known: tuple[str, ...]) -> None:
    """One line naming a keyword ``method`` does not take, and the ones it does."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise CheckpointError(f"{method}() takes no {unknown[0]}=; beyond step, model, optimizer, scheduler and "
                              f"history it takes {', '.join(k + '=' for k in known)}")


class Checkpointer:
    """Checkpoints of one training run in ``folder``.

    Args:
        folder: where ``step-NNNNNN/`` folders go (created on the first save).
        every: :meth:`maybe_save` saves when ``step % every == 0``.
        keep: how many of the newest checkpoints to keep (older ones are deleted).
        log: called with each one-line message (default ``print``).
    """

    def __init__(self, folder: str | Path, every: int = 10, keep: int = 2, log: Callable[[str], None] = print):
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise CheckpointError(f"every must be a whole number of steps >= 1, got {every!r}")
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
            raise CheckpointError(f"keep must be >= 1 (how many checkpoints to keep), got {keep!r}")
        self.folder = Path(folder)
        self.every = every
        self.keep = keep
        self.log = log

    # ------------------------------------------------------------------ reading

    def checkpoints(self) -> list[Path]:
        """Complete-looking checkpoint folders, oldest first (not yet verified)."""
        if not self.folder.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.folder.iterdir()
                 if p.is_dir() and (m := STEP_PATTERN.match(p.name))]
        return [p for _, p in sorted(found)]

    def _verify(self, path: Path) -> dict:
        """The parsed state.json of ``path``; ValueError naming what is wrong."""
        try:
            state = json.loads((path / "state.json").read_text())
        except FileNotFoundError:
            raise ValueError("state.json is missing") from None
        except (json.JSONDecodeError, UnicodeDecodeError, OSError) as error:
            raise ValueError(f"state.json is unreadable ({type(error).__name__})") from None
        if not isinstance(state, dict) or state.get("format") != FORMAT or not isinstance(state.get("files"), dict):
            raise ValueError("state.json is not a checkpoint of this format")
        for name, expected in state["files"].items():
            file = path / name
            if not file.is_file():
                raise ValueError(f"{name} is missing")
            size = file.stat().st_size
            if size != expected["size"]:
                raise ValueError(f"{name} is {size} bytes, expected {expected['size']}")
            if _sha256(file) != expected["sha256"]:
                raise ValueError(f"{name} does not match its checksum")
        return state

    def latest(self) -> Path | None:
        """The newest checkpoint whose files are all intact, or None."""
        for path in reversed(self.checkpoints()):
            try:
                self._verify(path)
                return path
            except ValueError:
                continue
        return None

    def resume(self, model, optimizer=None, scheduler=None, rngs: dict | None = None) -> Resume:
        """Restore the newest intact checkpoint into ``model``, ``optimizer``, ``scheduler`` and
        the random states; return where to continue. Prints one line saying what it did, and one
        line for each checkpoint it had to skip."""
        for path in reversed(self.checkpoints()):
            try:
                state = self._verify(path)
                self._check_model(path, model)
            except ValueError as problem:
                self.log(f"checkpoint: ignoring {path} ({problem})")
                continue
            self._restore(path, state, model, optimizer, scheduler, rngs or {})
            self.log(f"checkpoint: resumed from {path} (step {state['step']})")
            return Resume(step=int(state["step"]), history=list(state.get("history", [])),
                          extra=dict(state.get("extra", {})), path=path)
        self.log(f"checkpoint: none in {_shown(self.folder)}, starting from step 0")
        return Resume()

    def _check_model(self, path: Path, model) -> None:
        adapter = path / "adapter"
        if _is_peft(model) != adapter.is_dir():
            kind = "a LoRA adapter" if adapter.is_dir() else "full model weights"
            raise ValueError(f"it holds {kind}, which does not fit this model")
        if adapter.is_dir():
            from . import lm

            manifest = json.loads((adapter / lm.ADAPTER_MANIFEST).read_text())
            expected = lm.base_model_identity(model.get_base_model())
            if manifest.get("base_model") != expected:
                raise ValueError(f"it was trained on {manifest.get('base_model')!r}, this model is {expected!r}")

    def _restore(self, path: Path, state: dict, model, optimizer, scheduler, rngs: dict) -> None:
        import torch
        from safetensors.torch import load_file

        if _is_peft(model):
            from peft import set_peft_model_state_dict

            weights = load_file(str(path / "adapter" / "adapter_model.safetensors"))
            result = set_peft_model_state_dict(model, weights)
            unexpected = [k for k in getattr(result, "unexpected_keys", []) if "lora" in k]
            if unexpected:
                raise CheckpointError(f"{path}/adapter does not fit this model's LoRA layers ({unexpected[0]}, ...)")
        else:
            model.load_state_dict(load_file(str(path / "model.safetensors")))
        trainer = torch.load(path / "trainer.pt", map_location="cpu", weights_only=True)
        if optimizer is not None:
            if trainer.get("optimizer") is None:
                raise CheckpointError(f"{path} was saved without an optimizer; resume(model) without one")
            optimizer.load_state_dict(trainer["optimizer"])
        if scheduler is not None:
            if trainer.get("scheduler") is None:
                raise CheckpointError(f"{path} was saved without a scheduler; resume without one")
            scheduler.load_state_dict(trainer["scheduler"])
        _set_global_rng_state(trainer["rng"])
        saved = trainer.get("rngs", {})
        for name, rng in rngs.items():
            if name not in saved:
                raise CheckpointError(f"{path} has no random state named {name!r} (it has {sorted(saved) or 'none'})")
            kind, value = saved[name]
            _set_generator_state(rng, kind, value)

    # ------------------------------------------------------------------ writing

    def maybe_save(self, step: int, model, optimizer=None, scheduler=None, history: list | None = None,
                   **kept) -> Path | None:
        """:meth:`save` when ``step`` is a multiple of ``every`` (or ``final=True``); else None. ``kept``: what
        :meth:`save` takes by keyword (``rngs=``, ``extra=``), and ``final=``."""
        final = bool(kept.pop("final", False))
        _known_keywords(kept, "maybe_save", ("rngs", "extra", "final"))
        if final or step % self.every == 0:
            return self.save(step, model, optimizer, scheduler, history, **kept)
        return None

    def save(self, step: int, model, optimizer=None, scheduler=None, history: list | None = None, **kept) -> Path:
        """Write checkpoint ``step-NNNNNN`` (``step`` = steps done so far) atomically; prune old ones.
        ``kept``, by keyword: ``rngs={"name": generator}`` (their states come back with :meth:`resume`) and
        ``extra={...}`` (numbers, strings, lists and dicts)."""
        import torch

        _known_keywords(kept, "save", ("rngs", "extra"))
        rngs, extra = kept.get("rngs"), kept.get("extra")
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise CheckpointError(f"step must be the number of steps done (an int >= 0), got {step!r}")
        try:
            payload = json.dumps({"history": list(history or []), "extra": dict(extra or {})}, default=_jsonable)
        except (TypeError, ValueError) as error:
            raise CheckpointError(f"history and extra must hold numbers, strings, lists and dicts only "
                                  f"(found a {error}); store tensor values with .item()") from None
        self.folder.mkdir(parents=True, exist_ok=True)
        self._clean_partials()
        partial = self.folder / f".partial-{step:06d}-{uuid.uuid4().hex[:8]}"
        partial.mkdir()
        try:
            if _is_peft(model):
                from . import lm

                lm.save_adapter(model, partial / "adapter", checkpoint_step=step)
            else:
                from safetensors.torch import save_file

                save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()},
                          str(partial / "model.safetensors"))
            trainer = {
                "optimizer": optimizer.state_dict() if optimizer is not None else None,
                "scheduler": scheduler.state_dict() if scheduler is not None else None,
                "rng": _global_rng_state(),
                "rngs": {name: _generator_state(name, rng) for name, rng in (rngs or {}).items()},
            }
            torch.save(trainer, partial / "trainer.pt")
            files = {str(p.relative_to(partial)): {"size": p.stat().st_size, "sha256": _sha256(p)}
                     for p in sorted(partial.rglob("*")) if p.is_file()}
            state = {"format": FORMAT, "step": step, **json.loads(payload), "files": files}
            _write_synced(partial / "state.json", json.dumps(state, indent=1))
            target = self.folder / f"step-{step:06d}"
            if target.exists():
                stale = self.folder / f".partial-old-{uuid.uuid4().hex[:8]}"
                os.replace(target, stale)
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(partial, target)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        self._prune()
        return target

    def _clean_partials(self) -> None:
        for leftover in self.folder.glob(".partial-*"):
            shutil.rmtree(leftover, ignore_errors=True)

    def _prune(self) -> None:
        for old in self.checkpoints()[: -self.keep]:
            shutil.rmtree(old, ignore_errors=True)

    def clear(self) -> None:
        """Delete every checkpoint of this run (start over on the next resume)."""
        if self.folder.is_dir():
            shutil.rmtree(self.folder)


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def for_assignment(assignment_id: str, name: str = "train", every: int = 10, keep: int = 2,
                   log: Callable[[str], None] = print) -> Checkpointer:
    """The checkpointer of run ``name`` of a notebook: ``<artifacts_dir>/checkpoints/<name>``,
    on Google Drive on Colab (see :func:`helpers.runtime.artifacts_dir`)."""
    from . import runtime

    if not re.fullmatch(r"[A-Za-z0-9_.-]+", str(name)):
        raise CheckpointError(f"name must be a plain folder name such as 'train', got {name!r}")
    return Checkpointer(runtime.artifacts_dir(assignment_id) / "checkpoints" / name, every=every, keep=keep, log=log)
