"""tiny_grpo's visible self-checks, task probe and printing helpers: plumbing, never an answer.

Each ``check_*`` function runs a student's function on a small input whose right result is known,
and raises ``AssertionError`` naming the function, its cell and the likely slip when the result is
one of the common wrong answers. They check a subset of what the hidden tests check, on other
inputs, so passing them is necessary, not sufficient. ``sampled_exact_rate`` measures how often the
base model already samples a task's exact answer (GRPO can only reinforce such answers);
``show_examples`` prints before/after examples of the student's own evaluation (Cell 7, theirs to
write); ``load_policy`` loads the notebook's model.

Shapes: B prompts, G completions each, N = B*G rows.
"""
from __future__ import annotations

import dataclasses
import math

import torch

from helpers import grpo, lm

RECORD_KEYS = ("step", "loss", "reward_mean", "grad_norm", "kl")


def _floats(values) -> list[float]:
    return [float(v) for v in (values.reshape(-1) if isinstance(values, torch.Tensor) else values)]


def _close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(a - b) < tol


def in_chat_template(tokenizer, text: str, examples=()) -> str:
    """``text`` as the user's turn of the tokenizer's chat template, ready for the assistant's answer;
    ``examples`` (``(prompt, answer)`` pairs) come first as earlier turns, worked examples for a small model."""
    turns = []
    for prompt, answer in examples:
        turns += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
    turns.append({"role": "user", "content": text})
    return tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)


def quiet_transformers() -> None:
    """No FutureWarnings, info logs or download bars: widgets break the Markdown export."""
    import warnings

    import transformers

    warnings.filterwarnings("ignore", category=FutureWarning)
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


# --- Cell 3: the task -------------------------------------------------------------------------------

def check_make_prompts(make_prompts, train_prompts, eval_prompts, train_size: int) -> None:
    where = "make_prompts (Cell 3)"
    few = make_prompts(30, seed=1)
    assert len(few) == 30 and len(set(few)) == 30, f"{where}: make_prompts(n, seed) must return n distinct prompts"
    assert make_prompts(30, seed=1) == few, \
        f"{where}: the same seed must give the same list (draw from your own random.Random(seed))"
    assert make_prompts(30, seed=2) != few, f"{where}: another seed must give other prompts"
    assert not set(make_prompts(30, seed=2, exclude=few[:15])) & set(few[:15]), \
        f"{where}: it returned a prompt listed in exclude"
    assert len(set(train_prompts)) == train_size and not set(train_prompts) & set(eval_prompts), \
        f"{where}: TRAIN_PROMPTS must hold {train_size} distinct prompts, none of them in EVAL_PROMPTS"


def check_expected_answer(expected_answer, prompts) -> None:
    where = "expected_answer (Cell 3)"
    answers = [expected_answer(p) for p in prompts[:20]]
    assert all(isinstance(a, str) and a.strip() for a in answers), f"{where}: return a non-empty string"
    assert len({" ".join(a.split()) for a in answers}) > 1, f"{where}: every prompt got the same answer"
    assert all(" ".join(a.split()) != " ".join(p.split()) for a, p in zip(answers, prompts[:20], strict=True)), \
        f"{where}: the answer must not be the prompt itself"
    assert [expected_answer(p) for p in prompts[:20]] == answers, \
        f"{where}: the same prompt must always get the same answer"


# --- Cell 4: the reward --------------------------------------------------------------------------

def check_reward(get_reward, expected_answer, prompts) -> None:
    where = "get_reward (Cell 4)"
    prompts = list(prompts[:4])
    answers = [expected_answer(p) for p in prompts]
    assert _floats(get_reward(prompts, answers)) == [1.0] * 4, f"{where}: the expected answer must score exactly 1.0"
    assert _floats(get_reward(prompts, [" " + a + "\n" for a in answers])) == [1.0] * 4, \
        f"{where}: whitespace around the expected answer must not change its 1.0"
    assert _floats(get_reward(prompts[:2], ["", " \n "])) == [0.0, 0.0], \
        f"{where}: an empty or whitespace-only response must score 0.0"
    extra = _floats(get_reward(prompts, [a + " and more" for a in answers]))
    assert len(extra) == 4 and all(0.0 <= r < 1.0 for r in extra), \
        f"{where}: the answer followed by extra words must score below 1.0"


def check_sanity_table(get_reward, cases) -> None:
    where = "SANITY_CASES (Cell 4)"
    rows = list(cases)
    assert len(rows) >= 8, f"{where}: at least 8 rows ({len(rows)} now)"
    got = _floats(get_reward([row[0] for row in rows], [row[1] for row in rows]))
    assert len(got) == len(rows), f"{where}: get_reward returned {len(got)} rewards for {len(rows)} rows"
    wrong = [row[3] for g, row in zip(got, rows, strict=True) if abs(g - float(row[2])) >= 1e-6]
    assert not wrong, f"{where}: rows that do not score what they claim: {wrong}"
    assert {1.0, 0.0} <= {float(row[2]) for row in rows} and any(not row[1].strip() for row in rows), \
        f"{where}: include a row that scores 1.0, one that scores 0.0 and an empty or whitespace-only response"


# --- Cell 5: advantages, loss, the step -----------------------------------------------------------

def check_advantages(group_advantages) -> None:
    where = "group_advantages (Cell 5)"
    adv = _floats(group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0, 2.0, 0.0]), 2))
    assert len(adv) == 6, f"{where}: return one advantage per reward"
    assert all(abs(adv[i] + adv[i + 1]) < 1e-4 for i in (0, 2, 4)), \
        f"{where}: each group of group_size consecutive rows needs mean 0: subtract the group's own mean"
    assert any(all(_close(abs(a), s, 1e-3) for a in adv) for s in (2 ** -0.5, 1.0)), \
        f"{where}: divide by the group's own std + eps: here every advantage is ±0.707 (sample std) " \
        "or ±1 (population std)"


def check_advantage_edges(group_advantages) -> None:
    where = "group_advantages (Cell 5)"
    assert _floats(group_advantages(torch.tensor([0.5, 0.5, 1.0, 0.0]), 2))[:2] == [0.0, 0.0], \
        f"{where}: a tied group gets zeros (not NaN: add eps to the std)"
    try:
        group_advantages(torch.tensor([1.0, 0.0, 1.0]), 2)
    except ValueError:
        return
    raise AssertionError(f"{where}: 3 rewards cannot form groups of 2: raise ValueError")


_LOGPROBS = [[-1.0, -2.0, -3.0], [-0.5, -0.5, -9.0]]  # [N=2, T=3]
_MASK = [[1, 1, 0], [1, 1, 1]]
_SLIPS = {-2.0: "the mask was ignored (padding scored)", -0.6667: "the mask was ignored (padding scored)",
          3.5: "the sign is flipped (minimise -A log pi)", 0.9167: "the sign is flipped (minimise -A log pi)",
          -1.4: "one mean over all tokens of the batch", -7.0: "a sum over the completions instead of their mean"}


def check_loss(grpo_loss) -> None:
    where = "grpo_loss (Cell 5)"
    value = float(grpo_loss(torch.tensor(_LOGPROBS), torch.tensor([1.0, -1.0]), torch.tensor(_MASK)))
    if not any(_close(value, v) for v in (-3.5, -0.9167)):
        why = [w for v, w in _SLIPS.items() if _close(value, v)]
        raise AssertionError(f"{where}: got {value:.4f} here, expected -3.5 (sums over each completion) or -0.9167 "
                             "(per-token means)" + (f"; yours looks like {why[0]}" if why else ""))
    logprobs = torch.tensor(_LOGPROBS, requires_grad=True)
    grpo_loss(logprobs, torch.tensor([1.0, -1.0]), torch.tensor(_MASK)).backward()
    assert logprobs.grad is not None and float(logprobs.grad[0, 2]) == 0.0, f"{where}: padding must get no gradient"


def check_kl(grpo_loss, k3_kl) -> None:
    logprobs, mask = torch.tensor(_LOGPROBS), torch.tensor(_MASK)
    ref = logprobs + 0.5  # d = ref - policy = 0.5 everywhere
    assert float(k3_kl(logprobs, logprobs).abs().max()) < 1e-7, \
        "k3_kl (Cell 5): k3 is 0 where the policy equals the reference"
    assert _close(float(k3_kl(logprobs, ref)[0, 0]), 0.1487, 1e-3), \
        "k3_kl (Cell 5): exp(d) - d - 1 with d = ref_logprobs - logprobs (0.1487 for d = 0.5)"
    zero = torch.zeros(2)  # advantages of 0: only the KL term is left
    assert float(grpo_loss(logprobs, zero, mask, ref, beta=0.1)) > 0, "grpo_loss (Cell 5): add the KL term with +beta"
    assert float(grpo_loss(logprobs, zero, mask, ref, beta=0.0)) == 0.0, "grpo_loss (Cell 5): beta = 0 means no KL term"


def _marked_logits(sequences: torch.Tensor, prompt_width: int, vocab: int) -> torch.Tensor:
    """[N, L, V] zeros but for logit j + 1 at column j on the token of column j + 1: column j's
    log-prob of the next token is then (j + 1) - log(e^(j+1) + V - 1), a value that names j."""
    n, length = sequences.shape
    logits = torch.zeros(n, length, vocab)
    for j in range(prompt_width - 1, length - 1):
        logits[torch.arange(n), j, sequences[:, j + 1]] = float(j + 1)
    return logits


def check_logprobs(completion_logprobs) -> None:
    where = "completion_logprobs (Cell 5)"
    sequences, width, vocab = torch.tensor([[4, 1, 0, 3, 2], [2, 2, 5, 0, 1]]), 2, 6  # [N=2, L=5], P = 2
    logits = _marked_logits(sequences, width, vocab).requires_grad_(True)
    got = completion_logprobs(logits, sequences, width, 1.0)
    assert tuple(got.shape) == (2, 3), \
        f"{where}: one log-prob per completion token, [N, L - prompt_width]; got {tuple(got.shape)}"
    want = [j + 1 - math.log(math.exp(j + 1) + vocab - 1) for j in range(width - 1, 4)]  # columns 1, 2, 3
    row = _floats(got[0].detach())
    assert all(_close(a, b) for a, b in zip(row, want, strict=True)), (
        f"{where}: got {[round(v, 4) for v in row]} here, expected {[round(v, 4) for v in want]}: column j's logits "
        "predict token j + 1 (score sequences[:, P:] with logits[:, P-1:-1]); log_softmax over the vocabulary, "
        "then the entry of each next token")
    got.sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0, f"{where}: keep the log-probs on the graph"
    hot = completion_logprobs(2 * logits.detach(), sequences, width, 2.0)  # logits / 2 at temperature 2
    assert torch.allclose(hot.float(), got.detach().float(), atol=1e-4), f"{where}: divide the logits by temperature"


def _step(grpo_step, model, tokenizer, prompts, cfg, **changes) -> tuple[dict, int]:
    """Run one step; return its output and how many times it called grpo.sample_completions."""
    calls, original = [], grpo.sample_completions

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    grpo.sample_completions = counted
    try:
        out = grpo_step(model, tokenizer, list(prompts), dataclasses.replace(cfg, **changes))
    finally:
        grpo.sample_completions = original
    return out, len(calls)


def check_step_rows(grpo_step, model, tokenizer, prompts, cfg) -> None:
    where = "grpo_step (Cell 5)"
    out, _ = _step(grpo_step, model, tokenizer, prompts[:3], cfg, group_size=2, micro_batch=4)
    model.zero_grad(set_to_none=True)
    rewards, advantages = _floats(out["rewards"]), _floats(out["advantages"])
    assert len(rewards) == len(advantages) == 6, f"{where}: 3 prompts x G=2 must give 6 rewards and 6 advantages"
    assert all(abs(advantages[i] + advantages[i + 1]) < 1e-4 for i in (0, 2, 4)), \
        f"{where}: normalise the advantages within each prompt's group of G consecutive rows"
    try:
        grpo_step(model, tokenizer, list(prompts[:2]), dataclasses.replace(cfg, group_size=1))
    except ValueError:
        return
    finally:
        model.zero_grad(set_to_none=True)
    raise AssertionError(f"{where}: cfg.group_size < 2 must raise ValueError")


def check_step_backward(grpo_step, model, tokenizer, prompts, cfg) -> None:
    where = "grpo_step (Cell 5)"
    trainable = [p for p in model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in trainable]
    model.zero_grad(set_to_none=True)
    out, _ = _step(grpo_step, model, tokenizer, prompts[:2], cfg, group_size=2, micro_batch=2, beta=0.1)
    reached = all(p.grad is not None for p in trainable)
    model.zero_grad(set_to_none=True)
    assert math.isfinite(float(out["loss"])), f"{where}: 'loss' must be a finite number"
    assert reached, f"{where}: call backward() on each micro-batch's loss: the LoRA weights got no gradient"
    assert all(torch.equal(p.detach(), b) for p, b in zip(trainable, before, strict=True)), \
        f"{where}: no optimizer step inside grpo_step (train makes it)"
    assert float(out["kl"]) >= 0, f"{where}: 'kl' averages k3 values, which are never negative"


def check_one_rollout(grpo_step, model, tokenizer, prompts, cfg) -> None:
    _, calls = _step(grpo_step, model, tokenizer, prompts[:3], cfg, group_size=2, micro_batch=2)
    model.zero_grad(set_to_none=True)
    assert calls == 1, \
        f"grpo_step (Cell 5): sample all of a step's completions in ONE grpo.sample_completions call ({calls} calls)"


# --- Cell 6: the training loop ---------------------------------------------------------------------

def throwaway_policy(model_name: str, cfg):
    """A fresh LoRA copy of the notebook's model for :func:`check_train`, so the check leaves yours alone."""
    return lm.add_lora(lm.load_model(model_name, quantize_4bit=False), r=cfg.lora_r, target_modules="all-linear")


def check_train(train, policy, tokenizer, prompts, cfg) -> None:
    """Run ``train`` for 2 steps on ``policy`` (a throwaway LoRA model) with a stand-in ``grpo_step``
    whose gradient is 1 on every trainable weight; nothing is sampled for the loss."""
    where = "train (Cell 6)"
    trainable = [p for p in policy.parameters() if p.requires_grad]
    start = [p.detach().clone() for p in trainable]
    rollout = grpo.sample_completions(policy, tokenizer, list(prompts[:1]), 2, 4)
    entry = []

    def stand_in(model, tokenizer, prompts, cfg):
        entry.append(sum(float(p.grad.abs().sum()) for p in trainable if p.grad is not None))
        sum(p.sum() for p in trainable).backward()
        return {"loss": 0.5, "rewards": torch.tensor([0.0, 1.0]), "advantages": torch.tensor([-1.0, 1.0]), "kl": 0.0,
                "rollout": rollout}

    namespace = train.__globals__  # train finds grpo_step (and print) among the notebook's names
    saved = {name: namespace[name] for name in ("grpo_step", "print") if name in namespace}
    namespace.update(grpo_step=stand_in, print=lambda *args, **kwargs: None)  # the check's log lines: not shown
    try:
        records = train(policy, tokenizer, list(prompts[:20]),
                        dataclasses.replace(cfg, steps=2, batch_prompts=1, group_size=2, log_every=1))
    finally:
        for name in ("grpo_step", "print"):
            namespace.pop(name) if name in namespace else None
        namespace.update(saved)
    assert len(entry) == 2, f"{where}: call grpo_step once per step ({len(entry)} calls in 2 steps)"
    assert entry == [0.0, 0.0], f"{where}: zero the gradients before each grpo_step"
    assert all(not torch.equal(p.detach(), s) for p, s in zip(trainable, start, strict=True)), \
        f"{where}: make an optimizer step over the LoRA weights after each grpo_step"
    check_records(records, steps=2)
    assert _close(float(records[0]["loss"]), 0.5, 1e-9) and _close(float(records[0]["reward_mean"]), 0.5, 1e-6), \
        f"{where}: record the loss grpo_step returned and the mean of its rewards"


def check_records(history, steps: int | None = None) -> None:
    assert history, "train (Cell 6): no records: run the training cell"
    assert steps is None or len(history) == steps, \
        f"train (Cell 6): one record per step ({len(history)} for {steps} steps)"
    assert all(set(RECORD_KEYS) <= set(record) for record in history), \
        f"train (Cell 6): each record needs {', '.join(RECORD_KEYS)}"


# --- the task probe ---------------------------------------------------------------------------------

@torch.no_grad()
def sampled_exact_rate(model, tokenizer, prompts, expected_answer, cfg) -> tuple[float, float]:
    """Sample ``cfg.group_size`` completions per prompt (``cfg.max_new_tokens``, ``cfg.temperature``): the share
    that is exactly ``expected_answer`` (whitespace collapsed) and the share of groups holding one. Prints both."""
    prompts, group_size, temperature = list(prompts), cfg.group_size, cfg.temperature
    rollout = grpo.sample_completions(model, tokenizer, prompts, group_size, cfg.max_new_tokens,
                                      temperature=temperature)
    answers = [expected_answer(p).split() for p in prompts]
    hits = [c.split() == answers[i // group_size] for i, c in enumerate(rollout.completions)]  # [N]
    groups = [any(hits[i: i + group_size]) for i in range(0, len(hits), group_size)]  # [B]
    rate, with_one = sum(hits) / len(hits), sum(groups) / len(groups)
    hint = "" if any(hits) else " (every advantage would be 0: choose another task)"
    print(f"base model, {len(hits)} samples at temperature {temperature:g}: {rate:.1%} exact; {with_one:.1%} of the "
          f"groups of {group_size} hold one{hint}")
    return rate, with_one


def load_policy(cfg, profile: str):
    """``(model, tokenizer, model_name)``: ``cfg.model_id`` in ``profile`` (the tiny model on a CPU) in its
    compute dtype (fp16 on a T4, bf16 on newer GPUs) with a fresh LoRA adapter on every linear layer, and
    the fast sampler on a GPU. Prints what was loaded and the run's size."""
    name = lm.resolve_model(profile, cfg.model_id)
    tokenizer = lm.load_tokenizer(name)
    base = lm.load_model(name, quantize_4bit=False)
    model = lm.add_lora(base, r=cfg.lora_r, alpha=2 * cfg.lora_r, dropout=0.0, target_modules="all-linear")
    sampler = grpo.enable_fast_sampling(model, tokenizer)
    lora = model.num_parameters(only_trainable=True)
    print(f"{lm.base_model_identity(base)}: {model.num_parameters() - lora:,} parameters + {lora:,} LoRA weights, "
          f"{base.dtype} on {base.device}" + ("" if sampler.engine is None else f"; {sampler.describe()}"))
    print(f"{cfg.steps} steps x {cfg.batch_prompts} prompts x G={cfg.group_size}, lr {cfg.lr:g}, beta {cfg.beta:g}")
    return model, tokenizer, name


def shown(prompt: str, width: int = 40) -> str:
    """A prompt's end, quoted (a chat template puts a long preamble first)."""
    return repr(prompt if len(prompt) <= width else "…" + prompt[-width:])


def show_examples(prompts, base: list[str], tuned: list[str], get_reward, count: int = 5) -> None:
    """Print ``count`` examples, one line each: prompt -> the base's output (its reward) | the fine-tuned
    model's output (its reward)."""
    prompts = list(prompts)[:count]
    before, after = _floats(get_reward(prompts, base[:count])), _floats(get_reward(prompts, tuned[:count]))
    for i, prompt in enumerate(prompts):
        print(f"{shown(prompt, 26)} -> before {base[i]!r} ({before[i]:.1f}) | after {tuned[i]!r} ({after[i]:.1f})")


def update_metrics(path, **final) -> None:
    """Add ``final`` to the "final" entry of the metrics file the training cell wrote."""
    import json

    metrics = json.loads(path.read_text())
    metrics["final"].update(final)
    path.write_text(json.dumps(metrics))
