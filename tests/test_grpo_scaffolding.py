"""helpers.grpo beyond the basics: micro-batches of one rollout, divergence errors, fast sampling."""
from __future__ import annotations

import pytest
import torch

from helpers import grpo, lm

SORT_PROMPTS = ["Sort the digits: 3 1 2\nSorted:", "Sort the digits: 9 8 7 6 5\nSorted:",
                "Sort the digits: 4 4\nSorted:"]


@pytest.fixture()
def policy(tiny_model):
    policy = lm.add_lora(tiny_model, r=4, alpha=8, dropout=0.0)
    with torch.no_grad():  # a non-zero adapter, so merged and unmerged paths can differ if wrong
        generator = torch.Generator().manual_seed(0)  # both factors: lora_A's init would follow earlier tests
        for name, param in policy.named_parameters():
            if "lora_A" in name:
                param.copy_(0.1 * torch.randn(param.shape, generator=generator))
            if "lora_B" in name:
                param.add_(0.05 * torch.randn(param.shape, generator=generator))
    return policy


def test_micro_batches_cover_the_rollout_and_trim_padding(policy, tiny_tokenizer):
    torch.manual_seed(0)
    rollout = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 12)
    with torch.no_grad():
        whole = grpo.token_logprobs(policy, rollout.sequences, rollout.attention_mask, rollout.prompt_width)
    seen = []
    for rows, part in rollout.micro_batches(4):
        assert part.num_rows <= 4 and part.prompt_width == rollout.prompt_width
        assert part.completion_ids.shape[1] == int(part.completion_lengths.max())  # no all-pad columns
        with torch.no_grad():
            scored = grpo.token_logprobs(policy, part.sequences, part.attention_mask, part.prompt_width)
        width = part.completion_ids.shape[1]
        mask = part.completion_mask.bool()
        assert torch.allclose(scored[mask], whole[rows, :width][mask], atol=1e-5)
        seen += list(range(rollout.num_rows))[rows]
    assert seen == list(range(rollout.num_rows))
    assert rollout.select([5, 0]).completions == [rollout.completions[5], rollout.completions[0]]


def test_greedy_with_several_generations_repeats_each_prompt(policy, tiny_tokenizer):
    rollout = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS[:2], 3, 8, do_sample=False)
    assert rollout.group_size == 3 and rollout.num_rows == 6
    assert rollout.completions[0] == rollout.completions[1] == rollout.completions[2]


def test_diverged_weights_raise_a_clear_error_naming_the_step(policy, tiny_tokenizer):
    with torch.no_grad():
        next(p for p in policy.parameters() if p.requires_grad).fill_(float("nan"))
    with grpo.at_step(17), pytest.raises(grpo.NonFiniteError) as info:
        grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 8)
    message = str(info.value)
    assert "training step 17" in message and "Lower the learning rate" in message
    assert "probability tensor" not in message


def test_nan_logits_while_scoring_raise_the_clear_error(policy, tiny_tokenizer):
    rollout = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 1, 6)
    with torch.no_grad():
        policy.get_base_model().model.norm.weight.fill_(float("inf"))  # a frozen weight: the pre-check cannot see it
    with pytest.raises(grpo.NonFiniteError, match="while scoring"):
        grpo.token_logprobs(policy, rollout.sequences, rollout.attention_mask, rollout.prompt_width)
    with pytest.raises(grpo.NonFiniteError, match="while sampling"):
        grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 6)


@pytest.mark.parametrize("mode", ["merged", "compiled"])
def test_fast_sampler_matches_the_policy_and_follows_its_updates(policy, tiny_tokenizer, mode):
    """The inference copy decodes exactly what the policy decodes, before and after an update,
    without touching the policy's weights (the frozen reference stays where it was)."""
    batch = tiny_tokenizer(SORT_PROMPTS, return_tensors="pt", padding=True)
    base_before = {n: p.detach().clone() for n, p in policy.named_parameters() if not p.requires_grad}
    sampler = grpo.enable_fast_sampling(policy, tiny_tokenizer, mode=mode)
    try:
        fast = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 10, do_sample=False)
        with torch.no_grad():
            assert torch.allclose(policy(**batch).logits, sampler.engine(**batch).logits, atol=1e-4)
        optimizer = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=5e-2)
        logprobs = grpo.token_logprobs(policy, fast.sequences, fast.attention_mask, fast.prompt_width)
        (-(logprobs * fast.completion_mask).sum()).backward()
        optimizer.step()
        after = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 10, do_sample=False)
        assert sampler.syncs == 2
        with torch.no_grad():
            assert torch.allclose(policy(**batch).logits, sampler.engine(**batch).logits, atol=1e-4)
    finally:
        grpo.disable_fast_sampling(policy)
    eager = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 2, 10, do_sample=False)
    assert after.completions == eager.completions
    for name, param in policy.named_parameters():
        if not param.requires_grad:
            assert torch.equal(param, base_before[name]), name


@pytest.mark.parametrize("mode", ["merged"])
def test_fast_sampler_samples_the_base_model_while_the_adapter_is_off(policy, tiny_tokenizer, mode):
    """Issue 43: ``with grpo.adapter_disabled(policy):`` needs no ``disable_fast_sampling`` first."""
    with torch.no_grad():
        generator = torch.Generator().manual_seed(1)
        for name, param in policy.named_parameters():
            if "lora_A" in name or "lora_B" in name:
                param.copy_(0.5 * torch.randn(param.shape, generator=generator))  # an adapter that changes answers
    with grpo.adapter_disabled(policy):
        base = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 1, 10, do_sample=False).completions
    tuned = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 1, 10, do_sample=False).completions
    assert base != tuned  # the adapter matters, so the check below means something
    grpo.enable_fast_sampling(policy, tiny_tokenizer, mode=mode)
    try:
        with grpo.adapter_disabled(policy):
            fast_base = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 1, 10, do_sample=False)
        fast_tuned = grpo.sample_completions(policy, tiny_tokenizer, SORT_PROMPTS, 1, 10, do_sample=False)
    finally:
        grpo.disable_fast_sampling(policy)
    assert fast_base.completions == base and fast_tuned.completions == tuned


def test_sampler_mode_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(grpo.SAMPLER_VARIABLE, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert grpo.default_sampler_mode("cpu") == "eager"
    assert grpo.default_sampler_mode("cuda") == "compiled"
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # the grader's kernel: no compile (time, memory)
    assert grpo.default_sampler_mode("cuda") == "merged"
    assert grpo.default_sampler_mode("cpu") == "eager"
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.setenv(grpo.SAMPLER_VARIABLE, "merged")
    assert grpo.default_sampler_mode("cuda") == "merged"
    monkeypatch.setenv(grpo.SAMPLER_VARIABLE, "turbo")
    with pytest.raises(ValueError, match="COURSE_SAMPLER"):
        grpo.default_sampler_mode("cpu")
