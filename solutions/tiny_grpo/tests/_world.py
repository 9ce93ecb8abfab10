"""What the grpo_step and train probes run on: the shipped tiny model on the CPU, a fixed rollout
in place of sampling, a config of the tests' own, and stand-ins for the other TODOs.

Nothing here reads the notebook's state (its CFG, model or prompts), so the reference's recorded
values hold in either profile. The stand-ins are simple functions that are NOT the TODOs' answers
(completion_logprobs's is the log-prob minus 0.05, which neither the kit's scoring nor a step that skips
``score=completion_logprobs`` gives): a slip in get_reward, group_advantages, grpo_loss, k3_kl or
completion_logprobs costs nothing in the step's tests.
"""
import contextlib
import dataclasses
import io
import random
import zlib

import torch

from helpers import grpo, lm, tiny_model

SORT = lm.SORT_PROMPT_TEMPLATE
DIGITS = list(range(19, 29))   # the tiny tokenizer's ids of "0" to "9"
SPACE, EOS = 224, 2            # " " and "<|im_end|>" (the first of the model's end ids)
PROMPTS = [SORT.format(digits=d) for d in ("3 1", "9 0 4 4 1 7", "5 5 2")]   # B = 3, G = 4: row i answers i // 4
DEFAULTS = {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "prompt_style": "raw", "train_size": 1000,
            "eval_size": 200, "steps": 3, "batch_prompts": 2, "group_size": 4, "micro_batch": 6, "max_new_tokens": 8,
            "temperature": 0.7, "lr": 1e-3, "beta": 0.5, "max_grad_norm": 1.0, "lora_r": 8, "log_every": 1,
            "eval_batch": 100, "seed": 0, "kl_penalty": "loss"}
# The fields of the notebook's Config, with the tests' values. make_dataclass, not a class statement:
# the kernel compiles the probe with postponed (string) annotations, and dataclass then looks for the
# probe's module in sys.modules, where it is not.
StepConfig = dataclasses.make_dataclass("StepConfig", [(name, type(value), dataclasses.field(default=value))
                                                       for name, value in DEFAULTS.items()])


def tokenizer():
    return lm.load_tokenizer(str(tiny_model.path()))


def tiny_policy(nudge: bool = False):
    """A fresh LoRA policy on the tiny model, float32 on the CPU (lm.load_model would pick a GPU);
    ``nudge`` moves the adapter off zero, so that the policy and the reference differ."""
    from transformers import AutoModelForCausalLM

    with contextlib.redirect_stderr(io.StringIO()):           # no loading bars in the cell's output
        base = AutoModelForCausalLM.from_pretrained(str(tiny_model.path()), dtype=torch.float32)
    base.generation_config.pad_token_id = base.config.pad_token_id
    torch.manual_seed(0)                                      # the same LoRA initialisation every time
    policy = lm.add_lora(base, r=8, alpha=16, dropout=0.0, target_modules="all-linear")
    if nudge:
        noise = torch.Generator().manual_seed(5)
        with torch.no_grad():
            for name, weight in policy.named_parameters():
                if "lora_B" in name:
                    weight.add_(torch.randn(weight.shape, generator=noise) * 0.05)
    return policy


def trainable(policy) -> dict:
    return {name: p for name, p in policy.named_parameters() if p.requires_grad}


def completion_tokens(prompt: str, copy: int, max_new_tokens: int) -> list[int]:
    """The fixed completion number ``copy`` of ``prompt``: one to three spaced digits, then the end
    token, or (one copy in five) digits up to max_new_tokens without an end. It depends on the prompt
    and the copy only, so one call for the whole step and one call per prompt draw the same rows."""
    draw = random.Random(zlib.crc32(prompt.encode()) * 8 + copy)       # the same on every machine
    picks = [DIGITS[draw.randrange(10)] for _ in range(max_new_tokens)]
    if (zlib.crc32(prompt.encode()) + copy) % 5 == 4:                  # truncated: no end token
        return [SPACE if i % 2 == 0 else picks[i] for i in range(max_new_tokens)]
    tokens = [t for pick in picks[:draw.randint(1, 3)] for t in (SPACE, pick)] + [EOS]
    return tokens[:max_new_tokens]


def fixed_rollout(tok, prompts: list[str], num_generations: int, max_new_tokens: int, draw: int = 0) -> grpo.Rollout:
    """The rollout grpo.sample_completions returns in the tests: left-padded prompts, fixed completions
    (``draw`` > 0: other fixed completions, what a second call of the sampler gets)."""
    encoded = tok(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False)
    rows = [completion_tokens(p, j + 101 * draw, max_new_tokens) for p in prompts for j in range(num_generations)]
    width = max(len(r) for r in rows)
    completion_ids = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in rows])     # [N, T]
    completion_mask = grpo.completion_mask_from_eos(completion_ids, [EOS, 0])                     # [N, T]
    prompt_ids = encoded["input_ids"].repeat_interleave(num_generations, dim=0)                   # [N, P]
    prompt_mask = encoded["attention_mask"].repeat_interleave(num_generations, dim=0)             # [N, P]
    sizes = completion_mask.sum(dim=1).tolist()
    return grpo.Rollout(
        sequences=torch.cat([prompt_ids, completion_ids], dim=1),                                 # [N, P+T]
        attention_mask=torch.cat([prompt_mask, completion_mask], dim=1),                          # [N, P+T]
        prompt_width=prompt_ids.shape[1], completion_ids=completion_ids, completion_mask=completion_mask,
        completions=[tok.decode(r[:n], skip_special_tokens=True) for r, n in zip(rows, sizes, strict=True)],
        truncated=torch.tensor([EOS not in r for r in rows]), group_size=num_generations)


@contextlib.contextmanager
def fixed_sampling(tok, calls: list, fresh: bool = False):
    """grpo.sample_completions returns fixed rollouts while the block runs; ``calls`` gets each one. ``fresh``:
    every call draws other rows, so what a step computes shows whether it sampled once."""
    real = grpo.sample_completions

    def sample(model, tokenizer, prompts, num_generations, max_new_tokens, temperature=1.0, do_sample=True,
               top_p=1.0):
        calls.append(fixed_rollout(tok, prompts, num_generations, max_new_tokens, len(calls) if fresh else 0))
        return calls[-1]

    grpo.sample_completions = sample
    try:
        yield
    finally:
        grpo.sample_completions = real


def length_reward(prompts, responses):
    """The tests' own task: a reward from both lengths, so a row scored against another prompt shows."""
    return [((len(response) + 3 * len(prompt)) % 5) / 4 for prompt, response in zip(prompts, responses, strict=False)]


def centred(rewards, group_size, eps=1e-6):
    """Rewards minus their group's mean, not divided by the std (ValueError for groups that cannot be)."""
    rewards = torch.as_tensor(rewards, dtype=torch.float32)                                       # [N]
    if group_size < 2 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards cannot form groups of {group_size}")
    grouped = rewards.reshape(-1, group_size)                                                     # [B, G]
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)                              # [N]


def squared_gap_loss(logprobs, advantages, mask, ref_logprobs=None, beta=0.0):
    """-A times the log-prob plus beta times the squared gap to the reference, summed over each
    completion's tokens and averaged over completions (a squared gap, not k3)."""
    per_token = -advantages.detach().to(logprobs).unsqueeze(1) * logprobs                         # [n, t]
    if ref_logprobs is not None and beta != 0:
        per_token = per_token + beta * (logprobs - ref_logprobs.to(logprobs)) ** 2                # [n, t]
    kept = torch.where(mask.to(logprobs.device).bool(), per_token, torch.zeros_like(per_token))   # [n, t]
    return kept.sum(dim=1).mean()


def half(logprobs, ref_logprobs):
    """0.5 at every position: the step's kl then reads 0.5 per token, aggregated as its loss does."""
    return torch.full_like(logprobs, 0.5)                                                         # [n, t]


def error_name(fn, *args) -> str:
    """'ValueError' when fn raises one (or a subclass), else the error's type, else 'no error'; an
    unanswered TODO's NotImplementedError propagates, so that its message says so."""
    try:
        fn(*args)
    except ValueError:
        return "ValueError"
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - another error is an answer too, not the one asked for
        return type(error).__name__
    return "no error"


def shifted_logprobs(logits, sequences, prompt_width, temperature=1.0):
    """The stand-in for completion_logprobs: each completion token's log-prob at the temperature, minus 0.05, so a
    step that scores with the kit's own log-probs (no ``score=completion_logprobs``) returns another loss."""
    scaled = torch.log_softmax(logits[:, prompt_width - 1:-1].float() / temperature, dim=-1)       # [N, T, V]
    return scaled.gather(-1, sequences[:, prompt_width:, None]).squeeze(-1) - 0.05                 # [N, T]


STAND_INS = {"get_reward": length_reward, "group_advantages": centred, "grpo_loss": squared_gap_loss,
             "k3_kl": half, "completion_logprobs": shifted_logprobs}
