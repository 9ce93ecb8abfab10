"""Cell 4, get_reward (2 points) on the student's own task and 40 fresh prompts: the expected answer
scores 1.0 (also with whitespace around it), empty or blank responses 0.0, another prompt's answer,
the answer plus extra words and the prompt itself below 1.0, all in [0, 1], one reward per pair, and a
batch scores as its pairs one at a time. Judge: rules (the task is the student's)."""
from _rules import numbers, strings, words

TODO = "Cell 4, get_reward"
PROMPTS, ANSWERS = "40 prompts (make_prompts, seed 11)", "their expected answers"
GOOD, SPACED = "the expected answers", "the expected answers with whitespace around them"
EMPTY, SWAPPED = "an empty and two blank responses", "each prompt given the next prompt's answer"
EXTRA, ECHO = "the expected answers followed by ' and more'", "the prompts themselves as responses"
BATCH, SINGLE = "right and wrong answers in one batch", "the same pairs one at a time"


def probe(nb, observe):
    prompts = observe(PROMPTS, lambda: list(nb.make_prompts(40, seed=11)))
    answers = observe(ANSWERS, lambda: [nb.expected_answer(p) for p in prompts]) if prompts else None
    if not answers:
        return
    reward, shifted = nb.get_reward, answers[1:] + answers[:1]
    mixed = [answers[i] if i % 2 else shifted[i] for i in range(len(answers))]
    observe(GOOD, lambda: reward(list(prompts), list(answers)))
    observe(SPACED, lambda: reward(list(prompts), [" " + a + "\n" for a in answers]))
    observe(EMPTY, lambda: reward(prompts[:3], ["", "   ", "\n\t "]))
    observe(SWAPPED, lambda: reward(list(prompts), list(shifted)))
    observe(EXTRA, lambda: reward(list(prompts), [a + " and more" for a in answers]))
    observe(ECHO, lambda: reward(list(prompts), list(prompts)))
    observe(BATCH, lambda: reward(list(prompts), list(mixed)))
    observe(SINGLE, lambda: [reward([p], [r]) for p, r in zip(prompts, mixed, strict=False)])


def judge(check):
    prompts, answers = check.got(PROMPTS), check.got(ANSWERS)
    if not check.expect(strings(prompts) and strings(answers) and len(answers) == len(prompts) == 40,
                        "make_prompts(40, seed=11) and expected_answer must give 40 prompts and 40 string answers"):
        return
    sizes = {GOOD: 40, SPACED: 40, EMPTY: 3, SWAPPED: 40, EXTRA: 40, ECHO: 40, BATCH: 40, SINGLE: 40}
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
    check.expect(all(abs(x - y) < 1e-6 for x, y in zip(got[BATCH], got[SINGLE], strict=False)),
                 "scoring pairs one at a time must give the same rewards as one batch")
