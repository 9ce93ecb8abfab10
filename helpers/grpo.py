"""Sampling and scoring scaffolding shared by the three GRPO notebooks.

Only the plumbing lives here: drawing G completions per prompt, building the completion mask,
reading per-token log-probabilities of the sampled tokens, cutting a step's rollout into
micro-batches. Rewards, advantages and losses are the students' to write. What makes sampling
fast (a shared prompt prefix prefilled once on a CPU, a merged inference copy on a GPU) lives in
``helpers._fast_sampling``, behind one switch, :func:`enable_fast_sampling`; without it every rollout
is drawn the plain way. Nothing there changes which tokens a rollout holds or how they are scored.

Shapes: B prompts, G completions each, N = B*G rows, P the padded prompt width, T the number
of generated positions (the longest completion in the batch).

One rollout per optimizer step: sample every completion of the step in ONE ``generate`` call
(decoding is launch-bound, so 64 rows cost about what 8 do), then score and back-propagate in
micro-batches with :meth:`Rollout.select`.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, replace

import torch

from helpers import _fast_sampling
from helpers._fast_sampling import (  # noqa: F401 - the notebooks' names for them
    SAMPLER_MODES,
    SAMPLER_VARIABLE,
    Decoding,
    Sampler,
    default_sampler_mode,
    disable_fast_sampling,
)
from helpers._logprobs import head_token_logprobs


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


def _encode(model, tokenizer, prompts, copies: int, extra: dict):
    """``(encoded prompts, generate kwargs, layout)``: plain left padding (``layout`` None), or the fast
    sampler's shared-prefix layout when it asked for it (``_fast_sampling.SHARED_PREFIX``) and it pays."""
    if extra.pop(_fast_sampling.SHARED_PREFIX, False):
        found = _fast_sampling.encode_shared_prefix(model, tokenizer, prompts, copies, extra)
        if found is not None:
            return found
    pad_to_multiple_of = extra.pop(_fast_sampling.PAD_TO, None)  # the compiled sampler's static cache
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False,
                        pad_to_multiple_of=pad_to_multiple_of).to(next(model.parameters()).device)
    return encoded, extra, None


def _generate_rollout(model, tokenizer, prompts, decoding: Decoding, eos_ids, extra: dict | None = None) -> Rollout:
    """``decoding``'s completions of ``prompts`` in one ``generate`` call (``extra``: more of its arguments).
    The plain path: left-padded prompts, ``generate``, the completion mask after the first end token."""
    device = next(model.parameters()).device
    if tokenizer.padding_side != "left":
        raise ValueError("the tokenizer must pad on the left for generation (padding_side='left')")
    num_generations, repeats = decoding.num_generations, 1
    if not decoding.do_sample and num_generations > 1:  # greedy decoding refuses num_return_sequences > 1
        prompts = [prompt for prompt in prompts for _ in range(num_generations)]
        num_generations, repeats = 1, num_generations
    was_training = model.training
    model.eval()
    try:
        encoded, extra, layout = _encode(model, tokenizer, prompts, num_generations, dict(extra or {}))
        prompt_width = encoded["input_ids"].shape[1]
        generate_kwargs = dict(
            max_new_tokens=decoding.max_new_tokens,
            num_return_sequences=num_generations,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=eos_ids,
            do_sample=decoding.do_sample,
            **extra,
        )
        if decoding.do_sample:
            generate_kwargs.update(temperature=decoding.temperature, top_p=decoding.top_p, top_k=0)
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
        sequences = torch.cat([_fast_sampling.as_left_padded(sequences[:, :prompt_width], shared, pads),
                               completion_ids], dim=1)
        prompt_attention = _fast_sampling.as_left_padded(prompt_attention, shared, pads)  # [N, P]
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
def sample_completions(model, tokenizer, prompts: list[str], num_generations: int, *decoding, **by_name) -> Rollout:
    """Draw ``num_generations`` completions for each prompt in one ``generate`` call.

    What follows ``num_generations``, by position or by name, fills a :class:`Decoding`: ``max_new_tokens``,
    then ``temperature`` (1.0), ``do_sample`` (True; False: greedy) and ``top_p`` (1.0). Rows come grouped
    by prompt: rows ``i*G .. i*G+G-1`` belong to ``prompts[i]``. When :func:`enable_fast_sampling` was
    called on ``model``, the draw runs on its fast sampler.
    """
    if num_generations < 1:
        raise ValueError(f"num_generations must be >= 1, got {num_generations}")
    if not prompts:
        raise ValueError("no prompts to sample from")
    try:
        decoding = Decoding(num_generations, *decoding, **by_name)
    except TypeError as why:
        raise TypeError("sample_completions takes model, tokenizer, prompts, num_generations, max_new_tokens and "
                        "optionally temperature, do_sample, top_p: "
                        + str(why).replace("Decoding.__init__() ", "").replace("__init__() ", "")) from None
    _check_trainable_finite(model)
    sampler = _fast_sampling.sampler_of(model)
    if sampler is not None:
        return sampler.sample(prompts, decoding)
    return _generate_rollout(model, tokenizer, prompts, decoding, eos_token_ids(model, tokenizer))


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
    without it the kit's memory-saving version scores only the completion's columns, from the last hidden
    states through the output layer, a chunk of positions at a time.
    Raises :class:`NonFiniteError` when a scored position is NaN or infinite.
    """
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use 1.0 for greedy rollouts)")
    n_completion = sequences.shape[1] - prompt_width
    outputs = model(
        input_ids=sequences,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask),
        logits_to_keep=0 if score else 1,  # 0: every column; 1: the kit scores from the hidden states instead
        output_hidden_states=not score,
    )
    if score:
        scored = score(outputs.logits, sequences, prompt_width, temperature)  # [N, T]
        if tuple(scored.shape) != (sequences.shape[0], n_completion):
            raise ValueError(f"{getattr(score, '__name__', 'score')} returned shape {tuple(scored.shape)}; expected "
                             f"[N, L - prompt_width] = {[sequences.shape[0], n_completion]}")
    else:
        hidden = outputs.hidden_states[-1][:, prompt_width - 1:-1]  # [N, T, H]: column j predicts token j + 1
        scored = head_token_logprobs(hidden, model.get_output_embeddings(), sequences[:, prompt_width:],
                                     temperature)  # [N, T] float32, chunked: no [N, T, V] logits tensor
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


def enable_fast_sampling(policy, tokenizer, mode: str | None = None) -> Sampler:
    """Route :func:`sample_completions` on ``policy`` through a merged inference copy
    (``helpers._fast_sampling.Sampler``; on a CPU, ``eager`` keeps plain ``generate``).

    ``mode`` defaults to ``default_sampler_mode`` (set ``COURSE_SAMPLER=eager`` to switch it
    off). Returns the sampler; ``disable_fast_sampling(policy)`` undoes it.
    """
    if not hasattr(policy, "get_base_model"):
        raise TypeError("fast sampling needs a peft (LoRA) policy; plain models sample with generate directly")
    mode = mode or default_sampler_mode(next(policy.parameters()).device)
    sampler = Sampler(policy, tokenizer, mode, draw=_generate_rollout, eos_ids=eos_token_ids(policy, tokenizer))
    return _fast_sampling.register(policy, sampler)
