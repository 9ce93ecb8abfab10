"""Cell 3, expected_answer (1 point) on the student's own task: a non-empty string for each of 100 prompts,
the same when asked again (in another order), not one answer for all, never the prompt itself. The kernel
reports only the prompts (make_prompts, seed 17); expected_answer runs apart from the notebook and from any
model (``autograder/grading/task_process.py``), on the grader's calls. Judge: rules."""
import random

from _rules import apart_failed, strings, words

TODO = "Cell 3, expected_answer"
POINTS = 1
PROMPTS, ANSWERS, AGAIN = "100 prompts (make_prompts, seed 17)", "their answers", "their answers, asked again"
TASK_CELLS, TASK_FUNCTIONS = ("dataset", "reward"), ("expected_answer", "get_reward")


def probe(nb, observe):
    observe(PROMPTS, lambda: list(nb.make_prompts(100, seed=17)))


def answers_apart(task, prompts: list[str]) -> dict:
    """{"type": "list"} of expected_answer(p) for each prompt, asked in a process of its own."""
    return {"type": "list", "items": task.call("expected_answer", [(p,) for p in prompts])}


def task_observations(got: dict, task) -> dict:
    prompts = got.get(PROMPTS)
    if not strings(prompts) or len(prompts) != 100:
        return {}
    order = random.SystemRandom().sample(range(100), 100)          # the grader's order, unknown to the process
    again = answers_apart(task, [prompts[i] for i in order])["items"]
    back = [None] * 100
    for slot, i in enumerate(order):
        back[i] = again[slot]
    return {ANSWERS: answers_apart(task, prompts), AGAIN: {"type": "list", "items": back}}


def judge(check):
    prompts = check.got(PROMPTS)
    if not check.expect(strings(prompts) and len(prompts) == 100, f"{PROMPTS}: make_prompts must return 100 strings"):
        return
    if apart_failed(check, ANSWERS, "expected_answer"):
        return
    answers = check.got(ANSWERS)
    check.expect(strings(answers) and all(a.strip() for a in answers),
                 "expected_answer must return a non-empty string for every prompt")
    check.expect(check.got(AGAIN) == answers, "expected_answer must give the same answer every time")
    check.expect(len({words(a) for a in answers}) > 1,
                 "every prompt has the same answer: such a task teaches nothing")
    check.expect(all(words(a) != words(p) for a, p in zip(answers, prompts, strict=False)),
                 "the answer must not be the prompt itself")
