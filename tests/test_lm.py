"""The tiny model and the GRPO sampling/scoring scaffolding, on real generations."""
from __future__ import annotations

import json
import re

import pytest
import torch

from helpers import _fast_sampling, grpo, lm

FORMAT = re.compile(r"^<think>\n[\s\S]*?\n</think>\n<answer>\n[\s\S]*?\n</answer>$")


def chat_prompts(tokenizer, n, seed=0):
    import random

    rng = random.Random(seed)
    prompts = []
    for _ in range(n):
        question = f"What is the sum of {rng.randint(10, 99)} and {rng.randint(1, 9)}?"  # unseen phrasing
        messages = [{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}, {"role": "user", "content": question}]
        prompts.append(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    return prompts


def test_tiny_model_shape_and_tokenizer_round_trip(tiny_model_dir, tiny_tokenizer):
    from helpers import tiny_model

    assert 500_000 <= tiny_model.read_manifest(tiny_model_dir)["parameters"] <= 3_000_000
    tok = tiny_tokenizer
    assert type(tok).__name__ == "Qwen2Tokenizer"  # AutoTokenizer re-applies Qwen2's rules
    assert tok.padding_side == "left"
    assert tok.pad_token_id != tok.eos_token_id
    text = "<think>\n12 + 7 = 19\n</think>\n<answer>\n19\n</answer> Café 1234"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text
    for tag in lm.TAG_TOKENS:
        assert len(tok(tag, add_special_tokens=False)["input_ids"]) == 1
    # the ids the builder trained with are the ids the reloaded tokenizer produces
    raw = json.loads((tiny_model_dir / "tokenizer.json").read_text())
    from tokenizers import Tokenizer

    assert Tokenizer.from_str(json.dumps(raw)).encode(text).ids == ids


def test_save_load_round_trip_identical_outputs(tiny_model, tiny_tokenizer, tmp_path):
    tiny_model.save_pretrained(tmp_path / "copy")
    tiny_tokenizer.save_pretrained(tmp_path / "copy")
    again = lm.load_model(str(tmp_path / "copy"))
    batch = tiny_tokenizer(chat_prompts(tiny_tokenizer, 3), return_tensors="pt", padding=True)
    with torch.no_grad():
        assert torch.equal(tiny_model(**batch).logits, again(**batch).logits)


def test_warm_up_gives_some_format_not_all(tiny_model, tiny_tokenizer):
    """GRPO needs something to fix and something to build on: the shipped weights keep the
    template on some unseen-phrasing prompts under greedy decoding, not on all."""
    rollout = grpo.sample_completions(tiny_model, tiny_tokenizer, chat_prompts(tiny_tokenizer, 60), 1, 48,
                                      do_sample=False)
    rate = sum(bool(FORMAT.match(text.strip())) for text in rollout.completions) / 60
    assert 0.1 <= rate <= 0.6, f"greedy format rate {rate:.2f} outside the warm-up target"


def test_completion_mask_keeps_first_eos_and_nothing_after():
    eos, pad = 5, 0
    ids = torch.tensor([[7, 8, eos, pad, pad], [7, eos, 9, eos, 1], [7, 8, 9, 9, 9]])
    mask = grpo.completion_mask_from_eos(ids, [eos])
    assert mask.tolist() == [[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]]
    # pad equal to EOS: the first EOS still counts, the padding after it does not
    ids = torch.tensor([[7, 8, eos, eos, eos], [eos, eos, eos, eos, eos]])
    assert grpo.completion_mask_from_eos(ids, [eos]).tolist() == [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]]
    # any id of the EOS list ends the completion
    assert grpo.completion_mask_from_eos(torch.tensor([[1, 6, 2]]), [5, 6]).tolist() == [[1, 1, 0]]


def test_batched_logprobs_match_each_sequence_alone(tiny_model, tiny_tokenizer):
    torch.manual_seed(0)
    prompts = ["Sort the digits: 3 1\nSorted:", chat_prompts(tiny_tokenizer, 1)[0],
               "Sort the digits: 9 8 7 6 5 4\nSorted:"]
    rollout = grpo.sample_completions(tiny_model, tiny_tokenizer, prompts, 2, 24, temperature=0.8)
    assert rollout.sequences.shape[0] == 6
    assert rollout.prompt_width == rollout.sequences.shape[1] - rollout.completion_ids.shape[1]
    with torch.no_grad():
        batched = grpo.token_logprobs(tiny_model, rollout.sequences, rollout.attention_mask, rollout.prompt_width, 0.8)
    for row in range(6):
        keep = rollout.attention_mask[row].bool()
        alone_ids = rollout.sequences[row][keep].unsqueeze(0)  # no padding at all
        n_completion = int(rollout.completion_mask[row].sum())
        prompt_len = alone_ids.shape[1] - n_completion
        with torch.no_grad():
            alone = grpo.token_logprobs(tiny_model, alone_ids, torch.ones_like(alone_ids), prompt_len, 0.8)
        got = batched[row][rollout.completion_mask[row].bool()]
        assert torch.allclose(got, alone[0], atol=1e-5), (row, (got - alone[0]).abs().max())


@pytest.fixture
def prefix_layouts(monkeypatch):
    """Records what each ``sample_completions`` call did with its prompts: the shared prefix's
    length, or None when it padded them on the left as usual."""
    found, real = [], _fast_sampling._shared_prefix_inputs

    def spy(*args):
        result = real(*args)
        found.append(None if result is None else result[2])
        return result

    monkeypatch.setattr(_fast_sampling, "_shared_prefix_inputs", spy)
    return found


@torch.no_grad()
def eager_sampler_draw(model, tokenizer, prompts, num_generations, max_new_tokens, **sampling):
    """What the eager fast sampler draws (``enable_fast_sampling`` on a CPU): the shared-prefix layout when it pays."""
    decoding = grpo.Decoding(num_generations, max_new_tokens, **sampling)
    return grpo._generate_rollout(model, tokenizer, prompts, decoding, grpo.eos_token_ids(model, tokenizer),
                                  extra={_fast_sampling.SHARED_PREFIX: True})


def shared_system_prompts(tokenizer) -> list[str]:
    questions = ["What is 7 + 2?", "What is the sum of 41 and 8?", "Add 3, 5 and 12.", "What is 90 - 9?", "Sum 1."]
    system = {"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}
    return [tokenizer.apply_chat_template([system, {"role": "user", "content": q}], tokenize=False,
                                          add_generation_prompt=True)
            for q in questions]  # one system prompt, five questions of different lengths


@pytest.mark.parametrize("do_sample", [True, False])
def test_a_shared_prompt_prefix_gives_the_left_padded_rollout(prefix_layouts, tiny_model, tiny_tokenizer, do_sample):
    prompts, minimum = shared_system_prompts(tiny_tokenizer), _fast_sampling.MIN_SHARED_PREFIX
    tiny_model.train()  # sampling switches to eval and back, whichever path it takes
    try:
        torch.manual_seed(3)
        shared = eager_sampler_draw(tiny_model, tiny_tokenizer, prompts, 3, 24, do_sample=do_sample)
        assert tiny_model.training
        torch.manual_seed(3)
        padded = grpo.sample_completions(tiny_model, tiny_tokenizer, prompts, 3, 24, do_sample=do_sample)
    finally:
        tiny_model.eval()
    assert prefix_layouts[0] is not None and prefix_layouts[0] >= minimum  # the fast draw shared its prefix
    assert len(prefix_layouts) == 1  # the plain path never looks for one
    assert not bool(padded.attention_mask[:, 0].all())  # the prompts differ in length: pads on the left
    # the same tokens from the same seed (the two layouts' logits agree to rounding: see the next test)
    assert shared.prompt_width == padded.prompt_width
    assert shared.completions == padded.completions
    for name in ("sequences", "attention_mask", "completion_ids", "completion_mask", "truncated"):
        assert torch.equal(getattr(shared, name), getattr(padded, name)), name


def test_a_prefilled_prefix_gives_the_left_padded_next_token_logits(tiny_model, tiny_tokenizer):
    prompts = shared_system_prompts(tiny_tokenizer)
    kwargs = dict(max_new_tokens=1, do_sample=True, top_k=0, output_logits=True, return_dict_in_generate=True,
                  pad_token_id=tiny_tokenizer.pad_token_id, num_return_sequences=2)
    with torch.no_grad():
        encoded, extra, layout = _fast_sampling.encode_shared_prefix(tiny_model, tiny_tokenizer, prompts, 2, {})
        assert layout is not None and encoded["attention_mask"][:, : layout[0]].all()  # the prefix first, unpadded
        shared = tiny_model.generate(**encoded, **extra, **kwargs).logits[0]  # [N, V] raw, before sampling
        plain = tiny_tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        expected = tiny_model.generate(**plain, **kwargs).logits[0]  # [N, V]
    assert torch.allclose(shared, expected, atol=1e-5), (shared - expected).abs().max()


def test_the_plain_path_left_pads_and_the_switch_shares_the_prefix(prefix_layouts, tiny_model, tiny_tokenizer):
    """CleanRL's order: without enable_fast_sampling a rollout is drawn the plain way; the eager sampler it
    registers on a CPU prefills the shared prefix once, and the adapter switch needs nothing by hand."""
    prompts = shared_system_prompts(tiny_tokenizer)
    policy = lm.add_lora(tiny_model, r=4, alpha=8, dropout=0.0)
    try:
        grpo.sample_completions(policy, tiny_tokenizer, prompts, 2, 4)
        assert prefix_layouts == []
        grpo.enable_fast_sampling(policy, tiny_tokenizer, mode="eager")
        grpo.sample_completions(policy, tiny_tokenizer, prompts, 2, 4)
        with grpo.adapter_disabled(policy):
            grpo.sample_completions(policy, tiny_tokenizer, prompts, 2, 4)
        assert len(prefix_layouts) == 2 and None not in prefix_layouts
    finally:
        grpo.disable_fast_sampling(policy)
        policy.unload()


def test_sample_completions_takes_its_decoding_by_position_or_by_name(tiny_model, tiny_tokenizer):
    """math_grpo's text shows sample_completions(model, tokenizer, chunk, 1, max_new_tokens, temperature, do_sample):
    the positional form and the keyword form draw the same rollout."""
    prompts = chat_prompts(tiny_tokenizer, 2)
    torch.manual_seed(5)
    positional = grpo.sample_completions(tiny_model, tiny_tokenizer, prompts, 2, 8, 0.7, True, 0.9)
    torch.manual_seed(5)
    named = grpo.sample_completions(tiny_model, tiny_tokenizer, prompts, num_generations=2, max_new_tokens=8,
                                    temperature=0.7, do_sample=True, top_p=0.9)
    assert positional.completions == named.completions and torch.equal(positional.sequences, named.sequences)


def test_prefix_layout_is_rearranged_to_left_padding():
    pad = 0
    # prefix [7, 8], then rows with 0, 1 and 2 pads before their own tokens
    middle = torch.tensor([[7, 8, 1, 2, 3], [7, 8, pad, 4, 5], [7, 8, pad, pad, 6]])
    left = _fast_sampling.as_left_padded(middle, shared=2, pads=torch.tensor([0, 1, 2]))
    assert left.tolist() == [[7, 8, 1, 2, 3], [pad, 7, 8, 4, 5], [pad, pad, 7, 8, 6]]
    pads = torch.tensor([0, 1, 2]).repeat_interleave(2)  # [N]
    copies = _fast_sampling.as_left_padded(middle.repeat_interleave(2, dim=0), 2, pads)
    assert torch.equal(copies, left.repeat_interleave(2, dim=0))  # G completions per prompt: rows in groups


def test_a_short_shared_prefix_keeps_left_padding(prefix_layouts, tiny_model, tiny_tokenizer):
    prompts = ["Sort the digits: 3 1\nSorted:", "Sort the digits: 9 8 7 6\nSorted:"]  # a few tokens in common
    rows = tiny_tokenizer(prompts, add_special_tokens=False)["input_ids"]
    assert 0 < _fast_sampling._shared_prefix_length(rows) < _fast_sampling.MIN_SHARED_PREFIX
    eager_sampler_draw(tiny_model, tiny_tokenizer, prompts, 2, 8)
    eager_sampler_draw(tiny_model, tiny_tokenizer, prompts[:1], 1, 8)  # one row: nothing to share
    assert prefix_layouts == [None, None]
    assert _fast_sampling._shared_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2  # every row keeps a token of its own
    assert _fast_sampling._shared_prefix_length([[5, 2], [1, 2]]) == 0


def test_sampled_text_matches_sampled_ids(tiny_model, tiny_tokenizer):
    rollout = grpo.sample_completions(tiny_model, tiny_tokenizer, chat_prompts(tiny_tokenizer, 2), 2, 32)
    for row, text in enumerate(rollout.completions):
        n = int(rollout.completion_mask[row].sum())
        assert text == tiny_tokenizer.decode(rollout.completion_ids[row, :n], skip_special_tokens=True)
    assert rollout.truncated.dtype == torch.bool


def test_policy_and_reference_equal_at_start_then_differ(tiny_model, tiny_tokenizer):
    policy = lm.add_lora(tiny_model, r=4, alpha=8, dropout=0.0)
    rollout = grpo.sample_completions(policy, tiny_tokenizer, chat_prompts(tiny_tokenizer, 2), 2, 16)
    args = (rollout.sequences, rollout.attention_mask, rollout.prompt_width)
    new = grpo.token_logprobs(policy, *args)
    ref = grpo.reference_token_logprobs(policy, *args)
    assert not ref.requires_grad and new.requires_grad
    mask = rollout.completion_mask.bool()
    assert torch.allclose(torch.exp(new - ref)[mask], torch.ones(int(mask.sum())), atol=1e-6)
    optimizer = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=1e-2)
    (-(new * mask).sum()).backward()
    optimizer.step()
    with torch.no_grad():
        after = grpo.token_logprobs(policy, *args)
    ref_after = grpo.reference_token_logprobs(policy, *args)
    assert torch.allclose(ref_after, ref, atol=1e-6)  # the reference is frozen
    assert (after - ref)[mask].abs().max() > 1e-4


def test_adapter_artifact_round_trip_and_errors(tiny_model_dir, tiny_tokenizer, tmp_path):
    policy = lm.add_lora(lm.load_model(str(tiny_model_dir)), r=4, alpha=8, dropout=0.0)
    with torch.no_grad():
        for name, param in policy.named_parameters():
            if "lora_B" in name:
                param.add_(0.05)
    saved = lm.save_adapter(policy, tmp_path / "adapter")
    restored = lm.load_adapter(lm.load_model(str(tiny_model_dir)), saved)
    batch = tiny_tokenizer(chat_prompts(tiny_tokenizer, 2), return_tensors="pt", padding=True)
    with torch.no_grad():
        assert torch.allclose(policy(**batch).logits, restored(**batch).logits, atol=1e-6)

    with pytest.raises(lm.AdapterError, match="not found"):
        lm.load_adapter(lm.load_model(str(tiny_model_dir)), tmp_path / "nothing-here")
    manifest = saved / lm.ADAPTER_MANIFEST
    recorded = json.loads(manifest.read_text())
    assert recorded["base_model"].startswith("course-kit/tiny-qwen2@sha256:") and recorded["profile"] == "tiny"
    manifest.write_text(json.dumps({"base_model": "Qwen/Qwen2.5-0.5B-Instruct", "profile": "full"}))
    with pytest.raises(lm.AdapterError, match="trained on 'Qwen/Qwen2.5-0.5B-Instruct'") as info:
        lm.load_adapter(lm.load_model(str(tiny_model_dir)), saved)
    assert "COURSE_PROFILE=full" in str(info.value) and "\n" not in str(info.value)
    # an adapter trained on other tiny weights (a local rebuild) is refused by the weights' hash
    manifest.write_text(json.dumps({"base_model": "course-kit/tiny-qwen2@sha256:0123456789abcdef", "profile": "tiny"}))
    with pytest.raises(lm.AdapterError, match="0123456789abcdef"):
        lm.load_adapter(lm.load_model(str(tiny_model_dir)), saved)
    manifest.write_text("{not json")
    with pytest.raises(lm.AdapterError, match="corrupt"):
        lm.load_adapter(lm.load_model(str(tiny_model_dir)), saved)


def test_four_bit_needs_cuda(tiny_model_dir):
    if torch.cuda.is_available():
        pytest.skip("this check is about CPU-only machines")
    with pytest.raises(RuntimeError, match="CUDA"):
        lm.load_model(str(tiny_model_dir), quantize_4bit=True)
