"""Cell 7, the submitted adapter (3 points): greedy answers to 200 fresh prompts of the student's task
(make_prompts, seed 4242, no training prompt), base model (adapter off) and fine-tuned. Judge: the
share of exact answers (expected_answer, whitespace collapsed) must rise by at least 10 points.

The answers are generated in the grading kernel with the submission's profile and model, so this
remains an in-kernel measurement: a hostile notebook could report answers it never generated."""
import contextlib
import io
import json
from pathlib import Path

from _rules import strings, words

from helpers import grpo, lm, profiles

TODO = "Cell 7, the fine-tuned adapter"
ADAPTER = Path("artifacts") / "tiny_grpo_adapter"
PROMPTS, ANSWERS = "200 fresh prompts (make_prompts, seed 4242)", "their expected answers"
LOADED, BASE, TUNED = "the saved adapter", "greedy answers, adapter off", "greedy answers, adapter on"


def load_adapter():
    """A fresh model of the grading profile with the submitted adapter (its base named in the adapter's manifest)."""
    trained_on = json.loads((ADAPTER / lm.ADAPTER_MANIFEST).read_text())["base_model"]
    name = lm.resolve_model(profiles.get_profile(), trained_on)
    with contextlib.redirect_stderr(io.StringIO()):           # no loading bars in the cell's output
        model = lm.load_model(name, quantize_4bit=False)
    return lm.load_tokenizer(name), lm.load_adapter(model, ADAPTER).eval()


def greedy(policy, tok, prompts: list[str], max_new_tokens: int) -> list[str]:
    out = []
    for start in range(0, len(prompts), 100):
        rollout = grpo.sample_completions(policy, tok, prompts[start:start + 100], 1, max_new_tokens, do_sample=False)
        out += rollout.completions
    return out


def probe(nb, observe):
    prompts = observe(PROMPTS, lambda: list(nb.make_prompts(200, seed=4242, exclude=list(nb.TRAIN_PROMPTS))))
    observe(ANSWERS, lambda: [nb.expected_answer(p) for p in prompts])
    loaded = []
    observe(LOADED, lambda: loaded.extend(load_adapter()))
    if not prompts or not loaded:
        return
    tok, policy = loaded
    max_new_tokens = observe("CFG.max_new_tokens", lambda: int(nb.CFG.max_new_tokens))
    with grpo.adapter_disabled(policy):
        observe(BASE, greedy, policy, tok, prompts, max_new_tokens)
    observe(TUNED, greedy, policy, tok, prompts, max_new_tokens)


def exact_share(answers: list[str], outputs: list[str]) -> float:
    return sum(words(a) == words(o) for a, o in zip(answers, outputs, strict=False)) / len(answers)


def judge(check):
    prompts, answers = check.got(PROMPTS), check.got(ANSWERS)
    check.got(LOADED)
    if not check.expect(strings(prompts) and strings(answers) and len(prompts) == len(answers) == 200,
                        "make_prompts(200, seed=4242, exclude=TRAIN_PROMPTS) and expected_answer must give "
                        "200 prompts and 200 string answers"):
        return
    base, tuned = check.got(BASE), check.got(TUNED)
    if not check.expect(strings(base) and strings(tuned) and len(base) == len(tuned) == 200,
                        "the greedy answers could not be read"):
        return
    before, after = exact_share(answers, base), exact_share(answers, tuned)
    check.notes.append(f"held-out exact answers: base model {before:.1%}, fine-tuned {after:.1%}")
    check.expect(after >= before + 0.10, f"on fresh held-out prompts your adapter must give the exact answer at "
                                         f"least 10 points more often than the base model (base {before:.1%}, "
                                         f"fine-tuned {after:.1%})")


HINTS = {LOADED: "train, save the adapter to artifacts/tiny_grpo_adapter (the training cell does) and submit "
                 "artifacts/ with the notebook"}
