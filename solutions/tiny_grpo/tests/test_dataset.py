"""Cell 3, make_prompts (1 point) on the student's own task: n distinct strings, the same list for the
same seed, another for another seed, none of the excluded prompts, and prompts of the task: the student's
expected_answer, run apart from the notebook and from any model (``autograder/grading/task_process.py``),
answers 20 of them. Judge: rules on what it returned (any task is right, so nothing is compared with the
reference's prompts); the prompts alone, which the kernel reports, never pay."""
from _rules import apart_failed, strings

TODO = "Cell 3, make_prompts"
POINTS = 1
FIRST, AGAIN, OTHER = "300 prompts, seed 7", "300 prompts, seed 7 again", "300 prompts, seed 8"
HELD = "60 prompts, seed 7, excluding the first 150 of seed 7's"
FEW = "5 prompts, seed 3"
ANSWERS = "expected_answer of 20 of seed 7's prompts"
TASK_CELLS, TASK_FUNCTIONS = ("dataset", "reward"), ("expected_answer", "get_reward")


def probe(nb, observe):
    make = nb.make_prompts
    first = observe(FIRST, make, 300, seed=7)
    observe(AGAIN, make, 300, seed=7)
    observe(OTHER, make, 300, seed=8)
    observe(HELD, lambda: make(60, seed=7, exclude=list(first)[:150]))
    observe(FEW, make, 5, seed=3)


def task_observations(got: dict, task) -> dict:
    first = got.get(FIRST)
    if not strings(first):
        return {}
    return {ANSWERS: {"type": "list", "items": task.call("expected_answer", [(p,) for p in first[:20]])}}


def judge(check):
    first, few = check.got(FIRST), check.got(FEW)
    check.expect(strings(first) and len(first) == 300 and strings(few) and len(few) == 5,
                 f"make_prompts(n, seed) must return a list of exactly n strings (n = 300: {_size(first)}; "
                 f"n = 5: {_size(few)})")
    check.expect(strings(first) and len(set(first)) == len(first), "make_prompts(300, seed=7) returned the same "
                 "prompt twice: the n prompts must be distinct")
    check.expect(check.got(AGAIN) == first, "make_prompts(300, seed=7) gave another list the second time: the same "
                 "seed must give the same prompts (draw from your own random.Random(seed))")
    check.expect(check.got(OTHER) != first, "make_prompts(300, seed=8) gave seed 7's list: another seed must give "
                 "other prompts")
    held, excluded = check.got(HELD), set(first[:150]) if strings(first) else set()
    check.expect(strings(held) and len(held) == 60 and not set(held) & excluded,
                 f"make_prompts(60, seed=7, exclude=...) returned {_size(held)}"
                 + (f", {len(set(held) & excluded)} of them excluded" if strings(held) else "")
                 + ": prompts listed in exclude must never be returned")
    if not apart_failed(check, ANSWERS, "expected_answer"):
        answers = check.got(ANSWERS)
        check.expect(strings(answers) and len(answers) == 20 and all(a.strip() for a in answers),
                     "expected_answer must answer each prompt make_prompts returns with a non-empty string")


def _size(value) -> str:
    return f"{len(value)} strings" if strings(value) else f"a {type(value).__name__}, not a list of strings"
