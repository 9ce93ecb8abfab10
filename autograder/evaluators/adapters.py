"""A submitted LoRA adapter, checked before peft reads any of it.

peft does what an ``adapter_config.json`` asks: initialisations computed from the base weights
(``init_lora_weights`` = "pissa", "olora", "loftq", ...) rewrite the base model in place,
``modules_to_save`` and ``bias`` other than "none" overwrite base weights with the file's,
``layer_replication`` rebuilds the model, a huge rank takes all memory. On a base model that an
evaluator keeps loaded across submissions that is one student changing the next student's grade.
So an adapter is accepted only when:

- its folder holds ``adapter_config.json`` and ``adapter_model.safetensors`` (no pickle ``.bin``),
  no larger than the assignment's cap;
- the config is plain LoRA (``peft_type`` LORA, ``bias`` none, no ``modules_to_save``,
  ``layer_replication``, DoRA, LoftQ, trainable tokens, target parameters or Megatron), its rank
  (and every rank in ``rank_pattern``) at most the cap, its target modules within the set the
  notebook trains; ``init_lora_weights`` is ignored (set to False: the weights come from the file);
- the safetensors header names only ``lora_A``/``lora_B`` weights of those modules, with shapes
  that match the rank, in a floating dtype, and every value is finite.

:func:`check` returns the clean config (a dict for ``peft.LoraConfig``) or raises
:class:`AdapterRefused` with one sentence naming the rule broken.
"""
from __future__ import annotations

import json
import math
import struct
from pathlib import Path

EMPTY_OR_FALSE = ("modules_to_save", "layer_replication", "loftq_config", "megatron_config",
                  "trainable_token_indices", "target_parameters", "lora_bias", "alora_invocation_tokens")
"""Options that change or replace base weights, or need them to build the adapter: must be unset.
Besides these, every ``*_config`` (LoftQ, EVA, CorDA, ...) and every ``use_*`` switch but
``use_rslora`` (DoRA, QALoRA, ...) must be unset: peft keeps adding variants, and none is needed
for the course. Other keys are not passed to peft at all (:func:`check` builds a clean config)."""
FLOAT_DTYPES = {"F64", "F32", "F16", "BF16"}


class AdapterRefused(ValueError):
    """The adapter breaks a rule; the message says which, in terms a student can act on."""


def _config(folder: Path, rules) -> dict:
    path = folder / "adapter_config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise AdapterRefused(f"adapter_config.json cannot be read ({type(error).__name__})") from None
    if not isinstance(config, dict):
        raise AdapterRefused("adapter_config.json is not a JSON object")
    if str(config.get("peft_type", "LORA")).upper() != "LORA":
        raise AdapterRefused(f"only LoRA adapters are accepted, not {config.get('peft_type')!r}")
    if config.get("bias", "none") != "none":
        raise AdapterRefused(f"bias={config.get('bias')!r} would overwrite the base model's biases: use bias='none'")
    switches = [k for k in config if k.endswith("_config") or (k.startswith("use_") and k != "use_rslora")]
    for key in (*EMPTY_OR_FALSE, *switches):
        if config.get(key) not in (None, False, [], {}, ""):
            raise AdapterRefused(f"{key} is set: it changes or replaces the base model's weights, which the "
                                 "grader does not allow (train a plain LoRA adapter)")
    ranks = [config.get("r")] + list((config.get("rank_pattern") or {}).values())
    for rank in ranks:
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= rules.max_rank:
            raise AdapterRefused(f"LoRA rank {rank!r} is outside 1..{rules.max_rank}")
    targets = config.get("target_modules")
    names = [targets] if isinstance(targets, str) else list(targets or [])
    if not names or not all(isinstance(n, str) for n in names):
        raise AdapterRefused("target_modules must name the modules the notebook trains")
    outside = sorted(set(names) - set(rules.target_modules))
    if outside:
        raise AdapterRefused(f"target module {outside[0]!r} is not one the notebook trains "
                             f"({', '.join(rules.target_modules)})")
    alpha = config.get("lora_alpha", 8)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise AdapterRefused(f"lora_alpha {alpha!r} is not a finite number")
    return {"r": config["r"], "lora_alpha": alpha, "lora_dropout": 0.0, "target_modules": names, "bias": "none",
            "task_type": "CAUSAL_LM", "fan_in_fan_out": bool(config.get("fan_in_fan_out", False)),
            "use_rslora": bool(config.get("use_rslora", False)), "rank_pattern": dict(config.get("rank_pattern") or {}),
            "alpha_pattern": dict(config.get("alpha_pattern") or {}),
            "layers_to_transform": config.get("layers_to_transform"), "layers_pattern": config.get("layers_pattern"),
            "init_lora_weights": False}


def _header(path: Path, max_bytes: int) -> tuple[dict, int]:
    size = path.stat().st_size
    if size > max_bytes:
        raise AdapterRefused(f"adapter_model.safetensors is {size / 2**20:.0f} MiB, over the "
                             f"{max_bytes // 2**20} MiB limit")
    with open(path, "rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise AdapterRefused("adapter_model.safetensors is truncated")
        length = struct.unpack("<Q", raw)[0]
        if length > min(size - 8, 16 * 2**20):
            raise AdapterRefused("adapter_model.safetensors has an unreadable header")
        try:
            header = json.loads(handle.read(length))
        except ValueError:
            raise AdapterRefused("adapter_model.safetensors has an unreadable header") from None
    if not isinstance(header, dict):
        raise AdapterRefused("adapter_model.safetensors has an unreadable header")
    header.pop("__metadata__", None)
    return header, 8 + length


def _tensors(folder: Path, config: dict, rules) -> None:
    """Only lora_A / lora_B weights of allowed modules, shapes matching the rank, finite floats."""
    path = folder / "adapter_model.safetensors"
    header, offset = _header(path, rules.max_mb * 2**20)
    if not header:
        raise AdapterRefused("adapter_model.safetensors holds no weights")
    for name, info in header.items():
        parts = name.split(".")
        if not (name.startswith("base_model.model.") and len(parts) >= 4 and parts[-1] == "weight"
                and parts[-2] in ("lora_A", "lora_B") and parts[-3] in config["target_modules"]):
            raise AdapterRefused(f"adapter_model.safetensors holds {name!r}, which is not a LoRA weight of the "
                                 "modules the notebook trains")
        if not isinstance(info, dict) or info.get("dtype") not in FLOAT_DTYPES:
            raise AdapterRefused(f"{name} is not a floating-point tensor")
        shape = info.get("shape")
        if not isinstance(shape, list) or len(shape) != 2 or not all(isinstance(d, int) and d > 0 for d in shape):
            raise AdapterRefused(f"{name} has the shape {shape!r}, not a matrix")
        rank = shape[0] if parts[-2] == "lora_A" else shape[1]
        if rank > rules.max_rank:
            raise AdapterRefused(f"{name} has rank {rank}, over the {rules.max_rank} limit")
    _finite(path, header, offset)


def _finite(path: Path, header: dict, offset: int) -> None:
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as handle:
            for name in handle.keys():
                import numpy as np

                values = handle.get_tensor(name)
                if values.dtype.kind == "f" and not np.isfinite(values).all():
                    raise AdapterRefused(f"{name} holds NaN or infinite values")
    except AdapterRefused:
        raise
    except Exception as error:  # noqa: BLE001 - bf16 and odd files: numpy cannot read them, torch can
        _finite_torch(path, error)


def _finite_torch(path: Path, first_error: Exception) -> None:
    try:
        import torch
        from safetensors.torch import load_file

        for name, tensor in load_file(str(path)).items():
            if not torch.isfinite(tensor).all():
                raise AdapterRefused(f"{name} holds NaN or infinite values")
    except AdapterRefused:
        raise
    except Exception:  # noqa: BLE001
        raise AdapterRefused(f"adapter_model.safetensors cannot be read ({type(first_error).__name__})") from None


def check(folder: str | Path, rules) -> dict:
    """The clean LoraConfig kwargs for the adapter in ``folder``; AdapterRefused when a rule is broken."""
    folder = Path(folder)
    if not (folder / "adapter_config.json").is_file():
        raise AdapterRefused("no adapter_config.json: save the adapter with helpers.lm.save_adapter")
    if not (folder / "adapter_model.safetensors").is_file():
        other = sorted(p.name for p in folder.glob("adapter_model.*"))
        raise AdapterRefused("no adapter_model.safetensors" + (f" ({other[0]} is not accepted: save with "
                                                               "safetensors, the default)" if other else ""))
    config = _config(folder, rules)
    _tensors(folder, config, rules)
    return config


def admit(adapter: Path, rules, base_model: str) -> tuple[dict | None, str | None]:
    """(the clean LoraConfig kwargs, None), or (None, why the adapter is not used).

    The adapter must pass :func:`check` and name ``base_model`` (``helpers.lm.base_model_identity``
    of the loaded base) in its ``course_kit_adapter.json``."""
    from helpers import lm

    try:
        clean = check(adapter, rules)
    except AdapterRefused as error:
        return None, f"the adapter was refused: {error}"
    try:
        trained_on = json.loads((Path(adapter) / lm.ADAPTER_MANIFEST).read_text()).get("base_model")
    except (OSError, ValueError, AttributeError):
        return None, f"the adapter has no readable {lm.ADAPTER_MANIFEST}: save it with helpers.lm.save_adapter"
    if trained_on != base_model:
        return None, f"the adapter was trained on {trained_on!r}, not on this profile's base model {base_model!r}"
    return clean, None


def attach(model, adapter: Path, rules, base_model: str):
    """(the policy: ``model`` with this adapter attached from a config the grader built, or None; why not)."""
    clean, problem = admit(adapter, rules, base_model)
    if problem:
        return None, problem
    from peft import LoraConfig, PeftModel

    return PeftModel.from_pretrained(model, adapter, config=LoraConfig(**clean)), None


HOLDER = "grader_holder"
"""The grader's own rank-1 adapter that a group's policy is built around; no row ever uses it."""


def attach_all(model, adapters: list[Path], rules, base_model: str):
    """(the policy with every admitted adapter attached, named ``s<i>`` after its place in ``adapters``
    (None when none was admitted); the problem per adapter, None for each attached one).

    For generation with peft's mixed-adapter batches (``adapter_names``), each row through its own
    adapter. The policy is built around :data:`HOLDER` and every student's adapter is added beside
    it, so any of them, the first included, can fail to load alone: it is deleted again and gets its
    own problem. The caller checks the base afterwards either way."""
    from peft import LoraConfig, get_peft_model

    admitted, problems = {}, []
    for i, adapter in enumerate(adapters):
        clean, problem = admit(adapter, rules, base_model)
        problems.append(problem)
        if problem is None:
            admitted[i] = LoraConfig(**clean, inference_mode=True)
    if not admitted:
        return None, problems
    holder = LoraConfig(r=1, target_modules=list(rules.target_modules), task_type="CAUSAL_LM", inference_mode=True)
    policy = get_peft_model(model, holder, adapter_name=HOLDER)
    for i, config in admitted.items():
        try:  # the grader's config first, so load_adapter never reads the file's own
            policy.add_adapter(f"s{i}", config)
            policy.load_adapter(adapters[i], adapter_name=f"s{i}")
        except Exception as error:  # noqa: BLE001 - unreadable weights: this adapter only
            if f"s{i}" in policy.peft_config:
                policy.delete_adapter(f"s{i}")
            problems[i] = f"the adapter could not be loaded ({type(error).__name__}: {str(error)[:200]})"
    return policy, problems
