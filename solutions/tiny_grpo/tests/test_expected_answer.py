"""Cell 3, expected_answer (1 point) on the student's own task: a non-empty string for each of 100
prompts, the same when asked again, not one answer for all, never the prompt itself. Judge: rules."""
from _rules import strings, words

TODO = "Cell 3, expected_answer"
PROMPTS, ANSWERS, AGAIN = "100 prompts (make_prompts, seed 17)", "their answers", "their answers, asked again"


def probe(nb, observe):
    prompts = observe(PROMPTS, lambda: list(nb.make_prompts(100, seed=17)))
    if prompts:
        observe(ANSWERS, lambda: [nb.expected_answer(p) for p in prompts])
        observe(AGAIN, lambda: [nb.expected_answer(p) for p in prompts])


def judge(check):
    prompts, answers = check.got(PROMPTS), check.got(ANSWERS)
    if not check.expect(strings(prompts), f"{PROMPTS}: make_prompts must return strings"):
        return
    check.expect(strings(answers) and all(a.strip() for a in answers),
                 "expected_answer must return a non-empty string for every prompt")
    check.expect(check.got(AGAIN) == answers, "expected_answer must give the same answer every time")
    check.expect(len({words(a) for a in answers}) > 1,
                 "every prompt has the same answer: such a task teaches nothing")
    check.expect(all(words(a) != words(p) for a, p in zip(answers, prompts, strict=False)),
                 "the answer must not be the prompt itself")
