"""The policy, the fixed rollouts and the stand-ins for TODOs 1 to 3 while a probe runs grpo_update (TODO 4).

The policy is the shipped tiny model on the CPU in float32, whatever the grading profile (the expected values were
recorded there), with LoRA weights drawn from a fixed seed so that ratios and KL are not trivial. Nothing is sampled:
``grpo.sample_completions`` is replaced, for the duration of the call, by a function that records how it was called
and returns a rollout built from fixed texts. The stand-ins are simple functions that are not the answers of TODOs 1
to 3, so TODO 4's points depend on TODO 4 alone: a reward from the response's length, rewards centred on their
group's mean (no division by the std), and the plain loss -(1 + epsilon) mean(A logp_new) + beta mean(gap^2) with
gap = logp_new - logp_ref (epsilon and beta both change it, so each must reach it).
"""
import contextlib

import numpy as np
import torch

from helpers import grpo, lm

MODEL_ID = "Qwen/Qwen2.5-0.5B-Instruct"
MAX_NEW_TOKENS = 24
COMPLETIONS = (
    "<think>\n41 + 7 = 48\n</think>\n<answer>\n48\n</answer>",
    "The answer is 48.",
    "<think>\nadd the ones first\n</think>\n<answer>\n28\n</answer>",
    "<think>\n5 plus 23</think><answer>28</answer>",
    "Sure! <think>\n88 + 3 = 91 because 8 + 3 = 11, so carry the one\n</think>\n<answer>\n91\n</answer>",
    "21",
    "<answer>\n63\n</answer>",
)
"""Texts of the fixed completions; the fifth is longer than MAX_NEW_TOKENS, so its rows are cut there (no EOS)."""


def tiny_policy(seed: int):
    """(LoRA policy, tokenizer): the tiny model in float32 on the CPU, adapter weights drawn from ``seed``."""
    from transformers import AutoModelForCausalLM

    name = lm.resolve_model("tiny", MODEL_ID)
    base = AutoModelForCausalLM.from_pretrained(name, dtype=torch.float32)    # the CPU, even where CUDA is present
    model = lm.add_lora(base, r=16, alpha=32, dropout=0.0)
    gen = np.random.default_rng(seed)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "lora_A" in pname or "lora_B" in pname:                      # B nonzero: the policy is not the reference
                scale = 0.1 if "lora_A" in pname else 0.02
                p.copy_(torch.from_numpy(scale * gen.standard_normal(tuple(p.shape))))
    return model, lm.load_tokenizer(name)


def chat_prompts(tokenizer, questions) -> list[str]:
    return [tokenizer.apply_chat_template([{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT},
                                           {"role": "user", "content": q}], tokenize=False, add_generation_prompt=True)
            for q in questions]


def fixed_rollout(tokenizer, prompts, group_size: int, max_new_tokens: int, eos_ids: list) -> grpo.Rollout:
    """``group_size`` fixed completions per prompt, laid out as sample_completions lays out a draw: prompts padded on
    the left, rows grouped by prompt, an EOS after each completion (pads after it), none where it was cut."""
    encoded = tokenizer(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False)
    rows = []
    for row in range(len(prompts) * group_size):
        ids = tokenizer(COMPLETIONS[(3 * row + 1) % len(COMPLETIONS)], add_special_tokens=False)["input_ids"]
        rows.append(ids[:max_new_tokens] if len(ids) >= max_new_tokens else ids + [eos_ids[0]])
    width = max(len(ids) for ids in rows)
    completion_ids = torch.tensor([ids + [tokenizer.pad_token_id] * (width - len(ids)) for ids in rows])  # [N, T]
    completion_mask = grpo.completion_mask_from_eos(completion_ids, eos_ids)                               # [N, T]
    prompt_ids = encoded["input_ids"].repeat_interleave(group_size, dim=0)                                  # [N, P]
    prompt_mask = encoded["attention_mask"].repeat_interleave(group_size, dim=0)                            # [N, P]
    sizes = completion_mask.sum(dim=1).tolist()                                                              # [N]
    return grpo.Rollout(
        sequences=torch.cat([prompt_ids, completion_ids], dim=1),                                            # [N, P+T]
        attention_mask=torch.cat([prompt_mask, completion_mask], dim=1),                                     # [N, P+T]
        prompt_width=prompt_ids.shape[1], completion_ids=completion_ids, completion_mask=completion_mask,
        completions=[tokenizer.decode(ids[:n], skip_special_tokens=True)
                     for ids, n in zip(completion_ids.tolist(), sizes, strict=True)],
        truncated=~torch.isin(completion_ids, torch.tensor(eos_ids)).any(dim=1),                            # [N]
        group_size=group_size)


class Recorder:
    """Stands in for grpo.sample_completions (no sampling: a fixed rollout) and watches grpo.token_logprobs and the
    optimizer while one grpo_update call runs."""

    def __init__(self, tokenizer, eos_ids: list):
        self.tokenizer, self.eos_ids = tokenizer, eos_ids
        self.samples, self.rollouts, self.rows_with_grad, self.steps = [], [], [], []
        self.real_token_logprobs = grpo.token_logprobs

    def sample_completions(self, model, tokenizer, prompts, num_generations, max_new_tokens, temperature=1.0,
                           do_sample=True, top_p=1.0):
        self.samples.append([len(prompts), int(num_generations), int(max_new_tokens), float(temperature)])
        self.rollouts.append(fixed_rollout(self.tokenizer, prompts, num_generations, max_new_tokens, self.eos_ids))
        return self.rollouts[-1]

    def token_logprobs(self, model, sequences, *args, **kwargs):
        if torch.is_grad_enabled():                       # the reference runs without gradient: it is not counted
            self.rows_with_grad.append(int(sequences.shape[0]))
        return self.real_token_logprobs(model, sequences, *args, **kwargs)

    def optimizer(self, params: list):
        """SGD at learning rate 0 whose step() keeps the gradient it would apply."""
        optimizer = torch.optim.SGD(params, lr=0.0)
        real_step = optimizer.step

        def step(*args, **kwargs):
            grads = [(p.grad if p.grad is not None else torch.zeros_like(p)).detach().reshape(-1) for p in params]
            self.steps.append(torch.cat(grads).clone())                                          # [trainable]
            return real_step(*args, **kwargs)

        optimizer.step = step
        return optimizer

    @contextlib.contextmanager
    def installed(self):
        saved = grpo.sample_completions, grpo.token_logprobs
        grpo.sample_completions, grpo.token_logprobs = self.sample_completions, self.token_logprobs
        try:
            yield self
        finally:
            grpo.sample_completions, grpo.token_logprobs = saved


def stand_in_reward(responses) -> torch.Tensor:
    return torch.tensor([len(text) / 50.0 for text in responses], dtype=torch.float32)          # [N]


def stand_in_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    grouped = rewards.reshape(-1, group_size)                                                    # [B, G]
    return (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)                             # [B*G]


def stand_ins(calls: list) -> dict:
    """The three stand-ins; the loss keeps (logp_new, logp_ref, loss) of every call in ``calls``."""

    def grpo_sequence_loss(logp_new, logp_ref, advantages, beta, epsilon):
        gap = logp_new - logp_ref                                                                # [n]
        loss = -(1.0 + epsilon) * (advantages * logp_new).mean() + beta * (gap ** 2).mean()
        calls.append([logp_new.detach().clone(), logp_ref.detach().clone(), loss.detach().clone()])
        return loss

    return {"format_reward": stand_in_reward, "compute_group_advantages": stand_in_advantages,
            "grpo_sequence_loss": grpo_sequence_loss}


def settings(nb, prompts: int, group_size: int, grad_accum: int, temperature: float):
    """The notebook's GRPOConfig for one test step: learning rate 0, no clipping of the gradient norm."""
    return nb.GRPOConfig(steps=1, prompts_per_step=prompts, group_size=group_size, grad_accum=grad_accum, lr=0.0,
                         beta=0.1, epsilon=0.3, max_new_tokens=MAX_NEW_TOKENS, temperature=temperature,
                         max_grad_norm=1e9)


def kept(into: list, fn, *args):
    """Calls fn and keeps what it returns in ``into`` (observe then records only whether it raised)."""
    into.append(fn(*args))
