"""What makes ``grpo.sample_completions`` fast; a student never needs to read it.

* On a CPU, the eager :class:`Sampler` lays prompts that share a long prefix (the r1_zero and
  chat-template instructions) out as ``[prefix | pad | own tokens]`` and prefills the prefix once
  for every row; the rollout is rearranged to plain left padding before anyone sees it. Without a
  sampler ``grpo`` samples the plain way (left padding, one ``generate``).
* On a GPU, :class:`Sampler` draws from an inference copy of the policy with its LoRA adapter
  merged in (optionally compiled with a static KV cache). The policy's own weights are never
  touched, so the loss and the frozen reference see exactly what they would without it.

Shapes: B prompts, N rows, P the padded prompt width.
"""
from __future__ import annotations

import os
import warnings
import weakref
from dataclasses import dataclass

import torch

from helpers import profiles

MIN_SHARED_PREFIX = 16
"""Shared prompt tokens worth a separate prefill; fewer cost more in the extra forward than they save."""


def _shared_prefix_length(rows: list[list[int]]) -> int:
    """How many leading tokens every row has in common, leaving each row at least one of its own."""
    shared = 0
    for column in zip(*rows, strict=False):  # stops at the shortest row
        if any(token != column[0] for token in column):
            break
        shared += 1
    return min(shared, min(len(row) for row in rows) - 1)


def _prefix_cache_fits(model) -> bool:
    """Whether a pre-filled ``DynamicCache`` with pads inside the prompt means what left padding means:
    not for a model whose generation config picks its own cache, nor for sliding-window layers
    (the pads would count towards the window)."""
    config = model.config
    if getattr(model.generation_config, "cache_implementation", None):
        return False
    return not (getattr(config, "use_sliding_window", False) and getattr(config, "sliding_window", None)) \
        and "sliding_attention" not in (getattr(config, "layer_types", None) or ())


def _shared_prefix_inputs(model, tokenizer, prompts, copies: int, device):
    """Encoded prompts laid out as ``[shared prefix | pad | own tokens]``, a KV cache of the prefix,
    its length and each prompt's pad count.

    The r1_zero and chat-template prompts repeat the same ~80 instruction tokens in every row;
    prefilling them once instead of once per row is most of a CPU evaluation's prefill. Positions
    are counted over real tokens and the pads are masked, so every row computes what it computes
    left-padded, up to float rounding (next-token logits within ~1e-5). Returns ``None`` when the
    prompts share fewer than ``MIN_SHARED_PREFIX`` tokens or the model's cache cannot be pre-filled
    this way.
    """
    from transformers import DynamicCache

    if not _prefix_cache_fits(model):
        return None
    rows = tokenizer(prompts, add_special_tokens=False)["input_ids"]
    shared = _shared_prefix_length(rows) if len(rows) * copies > 1 else 0
    if shared < MIN_SHARED_PREFIX:
        return None
    width, pad = max(len(row) for row in rows), tokenizer.pad_token_id
    input_ids = torch.tensor([row[:shared] + [pad] * (width - len(row)) + row[shared:] for row in rows])  # [B, P]
    attention_mask = torch.tensor([[1] * shared + [0] * (width - len(row)) + [1] * (len(row) - shared)
                                   for row in rows])  # [B, P]
    pads = torch.tensor([width - len(row) for row in rows], device=device)  # [B]
    cache = DynamicCache(config=model.config)
    model(input_ids=input_ids[:1, :shared].to(device), past_key_values=cache, use_cache=True, logits_to_keep=1)
    cache.batch_repeat_interleave(len(rows) * copies)  # one copy of the prefix per generated row
    encoded = {"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)}
    return encoded, cache, shared, pads


def as_left_padded(prompt_part: torch.Tensor, shared: int, pads: torch.Tensor) -> torch.Tensor:
    """[N, P] ``[prefix | pad | own]`` rows rearranged to ``[pad | prefix | own]`` (``pads``: [N]).

    A rollout's layout stays the one the notebooks document (left padding) whichever way it was
    sampled, so students' scoring code sees the tensors it would see from the plain path.
    """
    n_rows, width = prompt_part.shape
    column = torch.arange(width, device=prompt_part.device).expand(n_rows, width)  # [N, P]
    pads = pads.unsqueeze(1)  # [N, 1]
    source = torch.where(column < pads, shared + column,  # pads came right after the prefix
                         torch.where(column < pads + shared, column - pads, column))  # prefix, then own tokens
    return prompt_part.gather(1, source)  # [N, P]


@dataclass(frozen=True)
class Decoding:
    """What one ``generate`` call draws: how many completions per prompt, how long, how tokens are chosen."""

    num_generations: int
    max_new_tokens: int
    temperature: float = 1.0
    do_sample: bool = True
    top_p: float = 1.0


PAD_TO = "pad_to_multiple_of"
"""Key of ``extra`` (the rollout's extra ``generate`` arguments) that pads the prompts instead: a static
cache is compiled once for prompts padded to a multiple of it."""


SHARED_PREFIX = "course_kit_shared_prefix"
"""Key of ``extra`` with which the eager :class:`Sampler` asks ``grpo``'s rollout for the shared-prefix
layout (:func:`encode_shared_prefix`); without it the rollout left-pads, the plain way."""


def encode_shared_prefix(model, tokenizer, prompts, copies: int, extra: dict):
    """``(encoded prompts, extra generate kwargs with the prefix's cache, (shared, pads))`` when the prompts
    can be laid out around a shared prefix (on a CPU, when it pays), else None: the plain path then left-pads."""
    device = next(model.parameters()).device
    # A GPU prefills fast, and its compiled path pads prompts for a static cache: share prefixes on a CPU only;
    # never across rows of different adapters (peft's adapter_names), whose prefixes differ.
    if device.type != "cpu" or {PAD_TO, "cache_implementation", "adapter_names"} & set(extra):
        return None
    found = _shared_prefix_inputs(model, tokenizer, prompts, copies, device)
    if found is None:
        return None
    encoded, cache, shared, pads = found
    return encoded, {**extra, "past_key_values": cache}, (shared, pads)



SAMPLER_VARIABLE = "COURSE_SAMPLER"
SAMPLER_MODES = ("eager", "merged", "compiled")
_SAMPLERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _lora_layers(policy) -> dict:
    """name -> peft LoRA layer, for every LoRA-wrapped module of ``policy`` (names as in the base model)."""
    from peft.tuners.lora import LoraLayer

    base = policy.get_base_model()
    return {name: module for name, module in base.named_modules() if isinstance(module, LoraLayer)}


def _dequantized(weight, dtype):
    if weight.__class__.__name__ == "Params4bit":  # bitsandbytes 4-bit: the compute-dtype weight bnb multiplies with
        from peft.utils.integrations import dequantize_bnb_weight

        return dequantize_bnb_weight(weight, state=weight.quant_state).to(dtype)
    return weight.detach().to(dtype)


class Sampler:
    """Draws rollouts for a LoRA policy from an inference copy with the adapter merged in.

    * ``eager``: ``generate`` on the policy itself (the only mode on a CPU, where it is as fast).
    * ``merged``: a plain model in the compute dtype (float16 below compute capability 8.0,
      bfloat16 above) whose LoRA-targeted weights are ``W0 + B A * scale``, re-merged from the
      policy's current adapter whenever it changed. Other weights are shared with the policy
      (dequantized once when the base is 4-bit). The policy's own weights are never touched, so
      the loss and the frozen reference (adapter disabled) see exactly what they saw before.
    * ``compiled``: ``merged`` with a static KV cache, which ``transformers`` compiles on CUDA;
      prompts are padded to a multiple of 64 so the graph is reused across steps. On any error it
      falls back to ``merged`` for the rest of the run, with one warning.

    The log-probabilities of the loss always come from the policy (``token_logprobs``); the
    sampler only chooses tokens.
    """

    def __init__(self, policy, tokenizer, mode: str, draw, eos_ids: list[int]):
        """``draw(model, tokenizer, prompts, ...)`` is ``grpo``'s rollout function (passed in, so this
        module never imports ``grpo``, which imports it); ``eos_ids`` the policy's end tokens."""
        if mode not in SAMPLER_MODES:
            raise ValueError(f"unknown sampler mode {mode!r}; use one of {', '.join(SAMPLER_MODES)}")
        self.policy, self.tokenizer, self.mode = policy, tokenizer, mode
        self._draw, self.eos_ids = draw, eos_ids
        self.engine = None if mode == "eager" else self._build_engine()
        self._synced_version = None
        self.syncs = 0

    @torch.no_grad()
    def _build_engine(self):
        from transformers import AutoModelForCausalLM

        from . import lm

        base = self.policy.get_base_model()
        device = next(base.parameters()).device
        dtype = lm.compute_dtype(device)
        with torch.device(device):
            engine = AutoModelForCausalLM.from_config(base.config, dtype=dtype)
        engine.generation_config = base.generation_config
        self._lora = {}
        state = {}
        lora = _lora_layers(self.policy)
        for name, module in engine.named_modules():
            if not list(module.parameters(recurse=False)):
                continue
            source = base.get_submodule(name)
            if name in lora:
                source = source.get_base_layer()
            for param_name, _ in module.named_parameters(recurse=False):
                value = getattr(source, param_name)
                key = f"{name}.{param_name}" if name else param_name
                if name in lora and param_name == "weight":
                    merged_base = _dequantized(value, dtype)  # owned: W0 in the compute dtype
                    self._lora[name] = (lora[name], merged_base)
                    state[key] = merged_base.clone()
                elif value.dtype == dtype and value.device == device and value.__class__ is torch.nn.Parameter:
                    state[key] = value.detach()  # shared with the policy: no copy
                else:
                    state[key] = _dequantized(value, dtype)
        engine.load_state_dict(state, assign=True, strict=True)
        engine.tie_weights()
        engine.eval().requires_grad_(False)
        return engine

    def _lora_version(self) -> tuple[int, bool]:
        """What the engine's weights depend on: the adapter's values, and whether it is switched off
        (inside ``with policy.disable_adapter():`` the engine must sample the base model)."""
        values = sum(p._version for layer, _ in self._lora.values() for p in layer.parameters() if p.requires_grad)
        return values, any(getattr(layer, "disable_adapters", False) for layer, _ in self._lora.values())

    @torch.no_grad()
    def sync(self, force: bool = False) -> None:
        """Merge the policy's current adapter into the engine (skipped when nothing changed)."""
        if self.engine is None:
            return
        version = self._lora_version()
        if version == self._synced_version and not force:
            return
        adapter = self.policy.active_adapter
        adapter = adapter[0] if isinstance(adapter, (list, tuple)) else adapter
        for name, (layer, base_weight) in self._lora.items():
            target = self.engine.get_submodule(name).weight
            if adapter in layer.lora_A and not getattr(layer, "disable_adapters", False):
                delta = layer.get_delta_weight(adapter).to(target.dtype)  # [out, in] = scale * B @ A
                target.copy_(base_weight + delta)
            else:
                target.copy_(base_weight)
        self._synced_version = version
        self.syncs += 1

    def sample(self, prompts, decoding: Decoding):
        """A :class:`helpers.grpo.Rollout`, drawn from the engine (or the policy in eager mode)."""
        draw = self._draw
        if self.engine is None:  # eager: the policy itself, its prompts' shared prefix prefilled once
            return draw(self.policy, self.tokenizer, prompts, decoding, self.eos_ids, extra={SHARED_PREFIX: True})
        self.sync()
        if self.mode == "compiled":
            try:
                return draw(self.engine, self.tokenizer, prompts, decoding, self.eos_ids,
                            extra={PAD_TO: 64, "cache_implementation": "static"})
            except FloatingPointError:  # grpo.NonFiniteError: a diverged policy, not a compile failure
                raise
            except Exception as error:  # noqa: BLE001 - a compile failure must not end a student's run
                warnings.warn(f"compiled sampling failed ({type(error).__name__}: {str(error)[:200]}); "
                              f"sampling without a static cache from now on", stacklevel=2)
                self.mode = "merged"
        return draw(self.engine, self.tokenizer, prompts, decoding, self.eos_ids)

    def describe(self) -> str:
        if self.engine is None:
            return "sampling: eager generate on the policy"
        dtype = next(self.engine.parameters()).dtype
        return (f"sampling: {self.mode} inference copy "
                f"({str(dtype).replace('torch.', '')}, {len(self._lora)} LoRA layers merged)")


def default_sampler_mode(device) -> str:
    """``COURSE_SAMPLER`` when set; else ``eager`` on a CPU, ``compiled`` on CUDA, and ``merged``
    on CUDA while nbgrader autogrades.

    The grading kernel trains nothing (training cells load the submitted artifacts) and samples a
    handful of small batches, each of a new shape. Compiling for them is all cost: on an H200,
    tiny_grpo's graded run spent 85 s in the two cells that compiled, and the kernel's resident
    memory, its children included as the grader's 12 GB limit counts it, rose from 1.2 to 10.6 GB.
    """
    requested = os.environ.get(SAMPLER_VARIABLE, "").strip().lower()
    if requested:
        if requested not in SAMPLER_MODES:
            raise ValueError(f"{SAMPLER_VARIABLE}={requested!r} is not a sampler mode; use one of "
                             f"{', '.join(SAMPLER_MODES)}")
        return requested
    if torch.device(device).type != "cuda":
        return "eager"
    return "merged" if profiles.is_autograding() else "compiled"


def register(policy, sampler: Sampler) -> Sampler:
    """Route ``grpo.sample_completions`` on ``policy`` through ``sampler`` (``grpo.enable_fast_sampling``)."""
    _SAMPLERS[policy] = sampler
    return sampler


def disable_fast_sampling(policy) -> None:
    _SAMPLERS.pop(policy, None)


def sampler_of(policy) -> Sampler | None:
    """The sampler ``grpo.enable_fast_sampling`` gave ``policy``, if any."""
    return _SAMPLERS.get(policy)
