"""Cell 4, get_reward (2 points) on the student's own task and 40 fresh prompts: the expected answer
scores 1.0 (also with whitespace around it), empty or blank responses 0.0, another prompt's answer,
the answer plus extra words, the answer with its spaces removed and the prompt itself below 1.0, all in
[0, 1], one reward per pair, and a batch scores as its pairs one at a time. The kernel reports only the
prompts (make_prompts, seed 11); expected_answer and get_reward run apart from the notebook and from any model
(``autograder/grading/task_process.py``), every pair of every case in one call, in an order the grader
draws, so no case can be told from another without scoring it. Judge: rules (the task is the student's)."""
import random

from _rules import apart_failed, numbers, strings, words

from autograder.grading.hidden_tests import decode

TODO = "Cell 4, get_reward"
POINTS = 2
PROMPTS, ANSWERS = "40 prompts (make_prompts, seed 11)", "their expected answers"
GOOD, SPACED = "the expected answers", "the expected answers with whitespace around them"
EMPTY, SWAPPED = "an empty and two blank responses", "each prompt given the next prompt's answer"
EXTRA, ECHO = "the expected answers followed by ' and more'", "the prompts themselves as responses"
BATCH, SINGLE = "right and wrong answers in one batch", "the same pairs one at a time"
JOINED = "the expected answers with their spaces removed"
TASK_CELLS, TASK_FUNCTIONS = ("dataset", "reward"), ("expected_answer", "get_reward")


def probe(nb, observe):
    observe(PROMPTS, lambda: list(nb.make_prompts(40, seed=11)))


def cases(prompts: list[str], answers: list[str]) -> dict:
    shifted = answers[1:] + answers[:1]
    mixed = [answers[i] if i % 2 else shifted[i] for i in range(len(answers))]
    return {GOOD: (prompts, answers), SPACED: (prompts, [" " + a + "\n" for a in answers]),
            EMPTY: (prompts[:3], ["", "   ", "\n\t "]), SWAPPED: (prompts, shifted),
            EXTRA: (prompts, [a + " and more" for a in answers]), ECHO: (prompts, prompts), BATCH: (prompts, mixed),
            JOINED: (prompts, ["".join(a.split()) for a in answers])}


def scored_together(task, pairs: dict) -> dict:
    """get_reward on every pair of every case in one call, shuffled; the rewards back under each case's label."""
    flat = [(label, p, r) for label, (ps, rs) in pairs.items() for p, r in zip(ps, rs, strict=True)]
    order = random.SystemRandom().sample(range(len(flat)), len(flat))
    result = task.call("get_reward", [([flat[i][1] for i in order], [flat[i][2] for i in order])])[0]
    values = numbers(decode(result)) if result.get("type") != "error" else None
    if values is None or len(values) != len(flat):
        return dict.fromkeys(pairs, result)
    back = [0.0] * len(flat)
    for slot, i in enumerate(order):
        back[i] = values[slot]
    found, start = {}, 0
    for label, (ps, _) in pairs.items():
        found[label] = {"type": "list", "items": [{"type": "float", "value": v} for v in back[start:start + len(ps)]]}
        start += len(ps)
    return found


def task_observations(got: dict, task) -> dict:
    prompts = got.get(PROMPTS)
    if not strings(prompts) or len(prompts) != 40:
        return {}
    told = task.call("expected_answer", [(p,) for p in prompts])
    found, answers = {ANSWERS: {"type": "list", "items": told}}, [item.get("value") for item in told]
    if not strings(answers):
        return found
    pairs = cases(prompts, answers)
    found.update(scored_together(task, pairs))
    one_by_one = [([p], [r]) for p, r in zip(*pairs[BATCH], strict=True)]
    found[SINGLE] = {"type": "list", "items": task.call("get_reward", one_by_one)}
    return found


def judge(check):
    if apart_failed(check, ANSWERS, "expected_answer") or apart_failed(check, SINGLE, "get_reward"):
        return
    prompts, answers = check.got(PROMPTS), check.got(ANSWERS)
    if not check.expect(strings(prompts) and strings(answers) and len(answers) == len(prompts) == 40,
                        "make_prompts(40, seed=11) and expected_answer must give 40 prompts and 40 string answers"):
        return
    sizes = {GOOD: 40, SPACED: 40, EMPTY: 3, SWAPPED: 40, EXTRA: 40, ECHO: 40, BATCH: 40, SINGLE: 40, JOINED: 40}
    got = {label: numbers(check.got(label)) for label in sizes}
    bad = [label for label, n in sizes.items() if got[label] is None or len(got[label]) != n]
    if not check.expect(not bad, f"{bad[0] if bad else ''}: get_reward must return one finite number per "
                                 "(prompt, response) pair"):
        return
    check.expect(all(0.0 <= x <= 1.0 for values in got.values() for x in values), "rewards must lie in [0, 1]")
    check.expect(all(x == 1.0 for x in got[GOOD]), "the expected answer must score exactly 1.0")
    check.expect(all(x == 1.0 for x in got[SPACED]), "whitespace around the answer must not change the reward (1.0)")
    check.expect(all(x == 0.0 for x in got[EMPTY]), "an empty or whitespace-only response must score 0.0")
    differ = [words(a) != words(b) for a, b in zip(answers, answers[1:] + answers[:1], strict=False)]
    check.expect(all(x < 1.0 for x, d in zip(got[SWAPPED], differ, strict=False) if d),
                 "each response must be scored against its own prompt (another prompt's answer scored 1.0)")
    check.expect(all(x < 1.0 for x in got[EXTRA]), "extra text after the answer must score below 1.0")
    check.expect(all(x < 1.0 for x, p, a in zip(got[ECHO], prompts, answers, strict=False) if words(p) != words(a)),
                 "repeating the prompt must score below 1.0")
    check.expect(all(x < 1.0 for x, a in zip(got[JOINED], answers, strict=False) if words(a) != "".join(a.split())),
                 "an answer with its spaces removed must score below 1.0: whitespace is collapsed, not removed")
    check.expect(all(abs(x - y) < 1e-6 for x, y in zip(got[BATCH], got[SINGLE], strict=False)),
                 "scoring pairs one at a time must give the same rewards as one batch")
