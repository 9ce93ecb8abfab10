"""Sampling and scoring scaffolding shared by the three GRPO notebooks.

Only the plumbing lives here: drawing G completions per prompt, building the completion mask,
reading per-token log-probabilities of the sampled tokens, cutting a step's rollout into
micro-batches, and sampling fast on a GPU. Rewards, advantages and losses are the students'
to write.

Shapes: B prompts, G completions each, N = B*G rows, P the padded prompt width, T the number
of generated positions (the longest completion in the batch).

One rollout per optimizer step: sample every completion of the step in ONE ``generate`` call
(decoding is launch-bound, so 64 rows cost about what 8 do), then score and back-propagate in
micro-batches with :meth:`Rollout.select`.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import warnings
import weakref
from dataclasses import dataclass, replace

import torch

from helpers import profiles
from helpers._logprobs import chosen_token_logprobs


class NonFiniteError(FloatingPointError):
    """The policy produced NaN or infinite numbers: training has diverged."""


_step: contextvars.ContextVar = contextvars.ContextVar("course_kit_step", default=None)


@contextlib.contextmanager
def at_step(step: int):
    """Label errors raised inside with the training step, e.g. ``with grpo.at_step(step): ...``."""
    token = _step.set(step)
    try:
        yield
    finally:
        _step.reset(token)


def _diverged(what: str) -> NonFiniteError:
    step = _step.get()
    where = f" at training step {step}" if step is not None else ""
    return NonFiniteError(
        f"the policy's {what} became NaN or infinite{where}: an update blew up the weights. Lower the "
        "learning rate, check that your loss is finite before backward() (print it), and keep gradient "
        "clipping on; then restart from a fresh model (re-run the model cell).")


@dataclass
class Rollout:
    sequences: torch.Tensor
    """[N, P+T] prompt (left-padded) followed by the completion; rows grouped by prompt."""
    attention_mask: torch.Tensor
    """[N, P+T] 1 on real prompt tokens and on completion tokens up to the first EOS."""
    prompt_width: int
    """P: completions start at this column for every row, whatever the prompt's own length."""
    completion_ids: torch.Tensor
    """[N, T] the sampled tokens (pad after the end)."""
    completion_mask: torch.Tensor
    """[N, T] 1 up to and including the first EOS; all ones when no EOS was produced."""
    completions: list[str]
    """N decoded completions, special tokens removed."""
    truncated: torch.Tensor
    """[N] True when the completion hit max_new_tokens without an EOS."""
    group_size: int

    @property
    def completion_lengths(self) -> torch.Tensor:
        return self.completion_mask.sum(dim=1)  # [N]

    @property
    def num_rows(self) -> int:
        return self.sequences.shape[0]

    def select(self, rows: slice | list[int] | torch.Tensor) -> Rollout:
        """The rows ``rows`` as a smaller rollout (a micro-batch), with the completion columns
        past its longest completion dropped, so scoring it costs only what it holds.

        ``group_size`` is kept: compute advantages on the whole rollout first, then slice them
        with the same ``rows``.
        """
        if isinstance(rows, slice):
            index = torch.arange(self.num_rows)[rows]
        else:
            index = torch.as_tensor(rows, dtype=torch.long)
        device = self.sequences.device
        completion_mask = self.completion_mask[index.to(device)]  # [n, T]
        width = int(completion_mask.sum(dim=1).max().item()) if len(index) else 0
        keep = self.prompt_width + width
        return replace(
            self,
            sequences=self.sequences[index.to(device), :keep],  # [n, P+t]
            attention_mask=self.attention_mask[index.to(device), :keep],  # [n, P+t]
            completion_ids=self.completion_ids[index.to(device), :width],  # [n, t]
            completion_mask=completion_mask[:, :width],  # [n, t]
            completions=[self.completions[i] for i in index.tolist()],
            truncated=self.truncated[index.to(self.truncated.device)],
        )

    def micro_batches(self, size: int):
        """Consecutive row slices of at most ``size`` rows: ``(rows, rollout)`` pairs."""
        if size < 1:
            raise ValueError(f"micro-batch size must be >= 1, got {size}")
        for start in range(0, self.num_rows, size):
            rows = slice(start, min(start + size, self.num_rows))
            yield rows, self.select(rows)


def eos_token_ids(model, tokenizer) -> list[int]:
    """Every id that ends a completion: the generation config's list and the tokenizer's EOS."""
    ids = getattr(model.generation_config, "eos_token_id", None)
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids


def completion_mask_from_eos(completion_ids: torch.Tensor, eos_ids: list[int]) -> torch.Tensor:
    """[N, T] mask that keeps tokens up to and including the first EOS of each row.

    Built from positions, never from ``ids != pad`` (a pad that equals EOS would erase the EOS
    and a real token that equals pad would be dropped).
    """
    n_rows, width = completion_ids.shape
    is_eos = torch.isin(completion_ids, torch.tensor(eos_ids, device=completion_ids.device))  # [N, T]
    positions = torch.arange(width, device=completion_ids.device).expand(n_rows, width)  # [N, T]
    first_eos = torch.where(is_eos, positions, torch.full_like(positions, width)).min(dim=1).values  # [N]
    return (positions <= first_eos.unsqueeze(1)).long()  # [N, T]


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


def _as_left_padded(prompt_part: torch.Tensor, shared: int, pads: torch.Tensor) -> torch.Tensor:
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


def _encode_prompts(model, tokenizer, prompts, copies, device, pad_to_multiple_of, extra):
    """``(encoded prompts, extra generate kwargs, layout)``: ``layout`` is ``(shared, pads)`` when the
    prompts were laid out around a shared prefix (on a CPU, when it pays), else ``None`` (left-padded)."""
    extra = dict(extra or {})
    # A GPU prefills fast, and its compiled path pads prompts for a static cache: share prefixes on a CPU only.
    if device.type == "cpu" and pad_to_multiple_of is None and "cache_implementation" not in extra:
        found = _shared_prefix_inputs(model, tokenizer, prompts, copies, device)
        if found is not None:
            encoded, extra["past_key_values"], shared, pads = found
            return encoded, extra, (shared, pads)
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False,
                        pad_to_multiple_of=pad_to_multiple_of).to(device)
    return encoded, extra, None


def _generate_rollout(model, tokenizer, prompts, num_generations, max_new_tokens, temperature, do_sample, top_p,
                      eos_ids, pad_to_multiple_of=None, extra=None) -> Rollout:
    device = next(model.parameters()).device
    if tokenizer.padding_side != "left":
        raise ValueError("the tokenizer must pad on the left for generation (padding_side='left')")
    repeats = 1
    if not do_sample and num_generations > 1:  # greedy decoding refuses num_return_sequences > 1
        prompts = [prompt for prompt in prompts for _ in range(num_generations)]
        num_generations, repeats = 1, num_generations
    was_training = model.training
    model.eval()
    try:
        encoded, extra, layout = _encode_prompts(model, tokenizer, prompts, num_generations, device,
                                                 pad_to_multiple_of, extra)
        prompt_width = encoded["input_ids"].shape[1]
        generate_kwargs = dict(
            max_new_tokens=max_new_tokens,
            num_return_sequences=num_generations,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=eos_ids,
            do_sample=do_sample,
            **extra,
        )
        if do_sample:
            generate_kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
        sequences = model.generate(**encoded, **generate_kwargs)  # [N, P+T]
    except RuntimeError as error:  # torch's multinomial names the symptom, not the cause
        if "probability tensor contains" in str(error):
            raise _diverged("next-token probabilities (while sampling)") from None
        raise
    finally:
        if was_training:
            model.train()
    completion_ids = sequences[:, prompt_width:]  # [N, T]
    completion_mask = completion_mask_from_eos(completion_ids, eos_ids)  # [N, T]
    prompt_attention = encoded["attention_mask"].repeat_interleave(num_generations, dim=0)  # [N, P]
    if layout is not None:
        shared, pads = layout[0], layout[1].repeat_interleave(num_generations)  # pads: [N]
        sequences = torch.cat([_as_left_padded(sequences[:, :prompt_width], shared, pads), completion_ids], dim=1)
        prompt_attention = _as_left_padded(prompt_attention, shared, pads)  # [N, P]
    attention_mask = torch.cat([prompt_attention, completion_mask], dim=1)  # [N, P+T]
    ended = torch.isin(completion_ids, torch.tensor(eos_ids, device=device)).any(dim=1)  # [N]
    lengths = completion_mask.sum(dim=1).tolist()
    completions = [
        tokenizer.decode(row[:length], skip_special_tokens=True)
        for row, length in zip(completion_ids.tolist(), lengths, strict=True)
    ]
    return Rollout(
        sequences=sequences,
        attention_mask=attention_mask,
        prompt_width=prompt_width,
        completion_ids=completion_ids,
        completion_mask=completion_mask,
        completions=completions,
        truncated=~ended,
        group_size=num_generations * repeats,
    )


def _check_trainable_finite(model) -> None:
    """Greedy decoding of NaN logits raises nothing; catch diverged weights before sampling."""
    params = [p.detach() for p in model.parameters() if p.requires_grad]
    if params and not bool(torch.stack([p.abs().amax().float() for p in params]).isfinite().all()):
        raise _diverged("trainable weights (found before sampling)")


@torch.no_grad()
def sample_completions(
    model,
    tokenizer,
    prompts: list[str],
    num_generations: int,
    max_new_tokens: int,
    temperature: float = 1.0,
    do_sample: bool = True,
    top_p: float = 1.0,
) -> Rollout:
    """Draw ``num_generations`` completions for each prompt in one ``generate`` call.

    Rows come grouped by prompt: rows ``i*G .. i*G+G-1`` belong to ``prompts[i]``. When
    :func:`enable_fast_sampling` was called on ``model``, the draw runs on its fast sampler.
    """
    if num_generations < 1:
        raise ValueError(f"num_generations must be >= 1, got {num_generations}")
    if not prompts:
        raise ValueError("no prompts to sample from")
    _check_trainable_finite(model)
    sampler = _SAMPLERS.get(model)
    if sampler is not None:
        return sampler.sample(prompts, num_generations, max_new_tokens, temperature, do_sample, top_p)
    return _generate_rollout(model, tokenizer, prompts, num_generations, max_new_tokens, temperature, do_sample,
                             top_p, eos_token_ids(model, tokenizer))


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[N, L] positions counted over real tokens only, as ``generate`` does for left padding."""
    return (attention_mask.cumsum(dim=1) - 1).clamp(min=0)


def token_logprobs(
    model,
    sequences: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_width: int,
    temperature: float = 1.0,
    score=None,
) -> torch.Tensor:
    """[N, T] log-probability of each sampled completion token under ``model``.

    The logits at column j predict the token at column j+1, so the completion tokens
    ``sequences[:, P:]`` are scored by the logits at columns ``P-1 .. L-2``. Logits are divided
    by the sampling temperature so the numbers describe the distribution the tokens came from.
    Positions past the completion mask hold meaningless values: mask them in the loss.
    ``score(logits [N, L, V], sequences, prompt_width, temperature) -> [N, T]``, when given,
    computes the log-probs from the whole sequence's logits (tiny_grpo's ``completion_logprobs``);
    without it the kit's memory-saving version scores only the completion's columns.
    Raises :class:`NonFiniteError` when a scored position is NaN or infinite.
    """
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use 1.0 for greedy rollouts)")
    n_completion = sequences.shape[1] - prompt_width
    outputs = model(
        input_ids=sequences,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask),
        logits_to_keep=0 if score else n_completion + 1,  # 0: every column
    )
    if score:
        scored = score(outputs.logits, sequences, prompt_width, temperature)  # [N, T]
        if tuple(scored.shape) != (sequences.shape[0], n_completion):
            raise ValueError(f"{getattr(score, '__name__', 'score')} returned shape {tuple(scored.shape)}; expected "
                             f"[N, L - prompt_width] = {[sequences.shape[0], n_completion]}")
    else:
        logits = outputs.logits[:, :-1, :]  # [N, T, V] in the model's dtype; no float32 copy is made
        scored = chosen_token_logprobs(logits, sequences[:, prompt_width:], temperature)  # [N, T] float32, chunked
    real = attention_mask[:, prompt_width:].bool()  # [N, T] completion tokens up to the first EOS
    if not bool(torch.isfinite(scored.detach()[real]).all()):
        raise _diverged("log-probabilities (while scoring completions)")
    return scored


@contextlib.contextmanager
def adapter_disabled(model):
    """Run the base model of a peft model (the frozen reference); no-op for a plain model."""
    if hasattr(model, "disable_adapter"):
        with model.disable_adapter():
            yield model
    else:
        yield model


@torch.no_grad()
def reference_token_logprobs(model, sequences, attention_mask, prompt_width, temperature: float = 1.0, score=None):
    """[N, T] log-probs under the reference: the same weights with the LoRA adapter switched off."""
    with adapter_disabled(model):
        return token_logprobs(model, sequences, attention_mask, prompt_width, temperature, score)


def rollout_stats(rollout: Rollout, rewards: torch.Tensor) -> dict:
    """Diagnostics every GRPO notebook logs per step."""
    grouped = rewards.view(-1, rollout.group_size)  # [B, G]
    return {
        "reward_mean": rewards.float().mean().item(),
        "reward_std": rewards.float().std().item() if rewards.numel() > 1 else 0.0,
        "zero_std_groups": (grouped.std(dim=1) == 0).float().mean().item() if rollout.group_size > 1 else 1.0,
        "completion_length": rollout.completion_lengths.float().mean().item(),
        "truncated": rollout.truncated.float().mean().item(),
    }


# --------------------------------------------------------------------------------------
# Fast sampling on a GPU
# --------------------------------------------------------------------------------------

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

    def __init__(self, policy, tokenizer, mode: str = "merged"):
        if mode not in SAMPLER_MODES:
            raise ValueError(f"unknown sampler mode {mode!r}; use one of {', '.join(SAMPLER_MODES)}")
        self.policy, self.tokenizer, self.mode = policy, tokenizer, mode
        self.eos_ids = eos_token_ids(policy, tokenizer)
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

    def _lora_version(self) -> int:
        return sum(p._version for layer, _ in self._lora.values() for p in layer.parameters() if p.requires_grad)

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

    def sample(self, prompts, num_generations, max_new_tokens, temperature=1.0, do_sample=True, top_p=1.0) -> Rollout:
        if self.engine is None:
            return _generate_rollout(self.policy, self.tokenizer, prompts, num_generations, max_new_tokens,
                                     temperature, do_sample, top_p, self.eos_ids)
        self.sync()
        if self.mode == "compiled":
            try:
                return _generate_rollout(self.engine, self.tokenizer, prompts, num_generations, max_new_tokens,
                                         temperature, do_sample, top_p, self.eos_ids, pad_to_multiple_of=64,
                                         extra={"cache_implementation": "static"})
            except NonFiniteError:
                raise
            except Exception as error:  # noqa: BLE001 - a compile failure must not end a student's run
                warnings.warn(f"compiled sampling failed ({type(error).__name__}: {str(error)[:200]}); "
                              f"sampling without a static cache from now on", stacklevel=2)
                self.mode = "merged"
        return _generate_rollout(self.engine, self.tokenizer, prompts, num_generations, max_new_tokens, temperature,
                                 do_sample, top_p, self.eos_ids)

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


def enable_fast_sampling(policy, tokenizer, mode: str | None = None) -> Sampler:
    """Route :func:`sample_completions` on ``policy`` through a :class:`Sampler`.

    ``mode`` defaults to :func:`default_sampler_mode` (set ``COURSE_SAMPLER=eager`` to switch it
    off). Returns the sampler; ``disable_fast_sampling(policy)`` undoes it.
    """
    if not hasattr(policy, "get_base_model"):
        raise TypeError("fast sampling needs a peft (LoRA) policy; plain models sample with generate directly")
    mode = mode or default_sampler_mode(next(policy.parameters()).device)
    sampler = Sampler(policy, tokenizer, mode)
    _SAMPLERS[policy] = sampler
    return sampler


def disable_fast_sampling(policy) -> None:
    _SAMPLERS.pop(policy, None)
