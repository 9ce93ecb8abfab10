"""TODO 4, the update: three settings (groups of 2 and 4, 2 to 6 micro-batches, temperatures 0.7 to 1) on the tiny
model, with fixed rollouts and stand-ins for TODOs 1 to 3 (see _update.py).

Each step is observed from outside: the calls of grpo.sample_completions, the optimizer steps, the gradient they
would apply (compared with the reference's), the rows scored with gradient per call of grpo.token_logprobs (a rule:
never more than one micro-batch; the reference may be scored for the whole rollout at once, without gradient), and
whether the base weights stayed as they were."""
import torch
from _update import Recorder, chat_prompts, kept, settings, stand_ins, tiny_policy

from helpers import grpo

TODO = "TODO 4 (grpo_update)"
POINTS = 4
QUESTIONS = ("If you add 41 and 7, what is the result?", "What is 23 plus 5?", "Compute 88 + 3.",
             "Could you add 12 and 9?", "Sum 57 and 6.", "What is the total of 30 and 4?")
SETTINGS = ((4, 2, 0.9), (2, 3, 0.7), (4, 6, 1.0))
"""(group_size, grad_accum, temperature) of the three steps."""


def tag(setting: tuple) -> str:
    group_size, grad_accum, temperature = setting
    return f"groups of {group_size}, {grad_accum} micro-batches, temperature {temperature}"


def probe(nb, observe):
    model, tokenizer = tiny_policy(1234)
    prompts = chat_prompts(tokenizer, QUESTIONS)
    params = [p for p in model.parameters() if p.requires_grad]
    start = [p.detach().clone() for p in params]
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    for setting in SETTINGS:
        with torch.no_grad():                                           # every step starts from the same adapter
            for p, p0 in zip(params, start, strict=True):
                p.copy_(p0)
                p.grad = None
        one_step(nb, observe, model, tokenizer, prompts, setting)
        observe.value(f"{tag(setting)}: base weights unchanged",
                      all(bool((p.detach() == frozen[n]).all()) for n, p in model.named_parameters() if n in frozen))


def one_step(nb, observe, model, tokenizer, prompts: list, setting: tuple) -> None:
    """One grpo_update call with the stand-ins and the recorder in place, and what it did."""
    label = tag(setting)
    params = [p for p in model.parameters() if p.requires_grad]
    recorder = Recorder(tokenizer, grpo.eos_token_ids(model, tokenizer))
    with nb.replaced(**stand_ins([])), recorder.installed():
        observe(f"{label}: grpo_update", kept, [], nb.grpo_update, model, tokenizer, recorder.optimizer(params),
                list(prompts), settings(nb, len(prompts), *setting))
    observe.value(f"{label}: calls of grpo.sample_completions", len(recorder.samples))
    observe.value(f"{label}: what grpo.sample_completions was asked for", recorder.samples)
    observe.value(f"{label}: optimizer steps", len(recorder.steps))
    if recorder.steps:
        observe.sketch(f"{label}: accumulated gradient", recorder.steps[0])
    else:
        observe.value(f"{label}: accumulated gradient", None)
    observe.value(f"{label}: rows scored with gradient", recorder.rows_with_grad)


def judge(check):
    for setting in SETTINGS:
        label = tag(setting)
        group_size, grad_accum, _ = setting
        if not check.same(f"{label}: grpo_update"):
            continue
        if check.same(f"{label}: calls of grpo.sample_completions"):
            check.same(f"{label}: what grpo.sample_completions was asked for")
        check.same(f"{label}: optimizer steps")
        micro = len(QUESTIONS) * group_size // grad_accum
        rows_scored(check, f"{label}: rows scored with gradient", micro)
        gradient(check, f"{label}: accumulated gradient", grad_accum)
        check.same(f"{label}: base weights unchanged")


def rows_scored(check, label: str, micro: int) -> None:
    """The rule: grpo.token_logprobs with gradient on at most one micro-batch's rows at a time (a correct step may
    score the reference for the whole rollout at once: it runs without gradient, so it is not counted)."""
    rows = check.got(label)
    if not rows:
        check.expect(False, f"{label}: none: score each micro-batch's completions with grpo.token_logprobs")
        return
    check.expect(max(rows) <= micro, f"{label}: {max(rows)} at once, at most {micro} allowed: score the policy "
                                     "micro-batch by micro-batch, so that cfg.grad_accum bounds the memory, and "
                                     "the reference without gradient (grpo.reference_token_logprobs)")


def gradient(check, label: str, grad_accum: int) -> None:
    """The default comparison, with the one mistake a ratio of norms names: no division by grad_accum."""
    found = check.raw(label)
    if found is not None and found.get("type") == "array":
        got, want = check.got(label), check.want(label)                # [norm, 16 projections]
        if want[0] > 0 and grad_accum > 1 and abs(got[0] / want[0] - grad_accum) < 0.02 * grad_accum:
            check.expect(False, f"{label}: {grad_accum} times too large: divide each micro-batch's loss by "
                                "cfg.grad_accum before backward()")
            return
    check.same(label)


_GRADIENT = ("the gradient must be that of the loss over the whole rollout: check the advantage groups "
             "(cfg.group_size), the completion mask, the temperature of the log-probs, the reference with the adapter "
             "off and without gradient, the advantages of each micro-batch's rows, and the division by grad_accum")
HINTS = {}
for _setting in SETTINGS:
    _label = tag(_setting)
    HINTS[f"{_label}: calls of grpo.sample_completions"] = (
        "draw every completion of the step in ONE call of grpo.sample_completions, then cut that rollout into "
        "micro-batches")
    HINTS[f"{_label}: what grpo.sample_completions was asked for"] = (
        "[prompts, completions per prompt, max_new_tokens, temperature] must be [all of batch_prompts, "
        "cfg.group_size, cfg.max_new_tokens, cfg.temperature]")
    HINTS[f"{_label}: optimizer steps"] = "the given code takes the one optimizer step: do not call step() yourself"
    HINTS[f"{_label}: accumulated gradient"] = _GRADIENT
    HINTS[f"{_label}: base weights unchanged"] = "only the LoRA weights may change: the base stays frozen"
