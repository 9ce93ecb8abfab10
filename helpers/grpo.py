"""Sampling and scoring scaffolding shared by the three GRPO notebooks.

Only the plumbing lives here: drawing G completions per prompt, building the completion mask,
and reading per-token log-probabilities of the sampled tokens. Rewards, advantages and losses
are the students' to write.

Shapes: B prompts, G completions each, N = B*G rows, P the padded prompt width, T the number
of generated positions (the longest completion in the batch).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch


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
    """Draw ``num_generations`` completions for each prompt in one ``generate`` call."""
    if num_generations < 1:
        raise ValueError(f"num_generations must be >= 1, got {num_generations}")
    device = next(model.parameters()).device
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    if tokenizer.padding_side != "left":
        raise ValueError("the tokenizer must pad on the left for generation (padding_side='left')")
    prompt_width = encoded["input_ids"].shape[1]
    eos_ids = eos_token_ids(model, tokenizer)
    generate_kwargs = dict(
        max_new_tokens=max_new_tokens,
        num_return_sequences=num_generations,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=eos_ids,
        do_sample=do_sample,
    )
    if do_sample:
        generate_kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
    was_training = model.training
    model.eval()
    sequences = model.generate(**encoded, **generate_kwargs)  # [N, P+T]
    if was_training:
        model.train()
    completion_ids = sequences[:, prompt_width:]  # [N, T]
    completion_mask = completion_mask_from_eos(completion_ids, eos_ids)  # [N, T]
    prompt_attention = encoded["attention_mask"].repeat_interleave(num_generations, dim=0)  # [N, P]
    attention_mask = torch.cat([prompt_attention, completion_mask], dim=1)  # [N, P+T]
    ended = torch.isin(completion_ids, torch.tensor(eos_ids, device=device)).any(dim=1)  # [N]
    lengths = completion_mask.sum(dim=1).tolist()
    completions = [
        tokenizer.decode(row[:length], skip_special_tokens=True)
        for row, length in zip(completion_ids.tolist(), lengths)
    ]
    return Rollout(
        sequences=sequences,
        attention_mask=attention_mask,
        prompt_width=prompt_width,
        completion_ids=completion_ids,
        completion_mask=completion_mask,
        completions=completions,
        truncated=~ended,
        group_size=num_generations,
    )


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[N, L] positions counted over real tokens only, as ``generate`` does for left padding."""
    return (attention_mask.cumsum(dim=1) - 1).clamp(min=0)


def token_logprobs(
    model,
    sequences: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_width: int,
    temperature: float = 1.0,
) -> torch.Tensor:
    """[N, T] log-probability of each sampled completion token under ``model``.

    The logits at column j predict the token at column j+1, so the completion tokens
    ``sequences[:, P:]`` are scored by the logits at columns ``P-1 .. L-2``. Logits are divided
    by the sampling temperature so the numbers describe the distribution the tokens came from.
    Positions past the completion mask hold meaningless values: mask them in the loss.
    """
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use 1.0 for greedy rollouts)")
    n_completion = sequences.shape[1] - prompt_width
    outputs = model(
        input_ids=sequences,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask),
        logits_to_keep=n_completion + 1,
    )
    logits = outputs.logits[:, :-1, :].float() / temperature  # [N, T, V]
    targets = sequences[:, prompt_width:]  # [N, T]
    log_probs = torch.log_softmax(logits, dim=-1)  # [N, T, V]
    return log_probs.gather(dim=-1, index=targets.unsqueeze(-1)).squeeze(-1)  # [N, T]


@contextlib.contextmanager
def adapter_disabled(model):
    """Run the base model of a peft model (the frozen reference); no-op for a plain model."""
    if hasattr(model, "disable_adapter"):
        with model.disable_adapter():
            yield model
    else:
        yield model


@torch.no_grad()
def reference_token_logprobs(model, sequences, attention_mask, prompt_width, temperature: float = 1.0):
    """[N, T] log-probs under the reference: the same weights with the LoRA adapter switched off."""
    with adapter_disabled(model):
        return token_logprobs(model, sequences, attention_mask, prompt_width, temperature)


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
