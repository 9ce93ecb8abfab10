"""Cell 3, make_prompts (1 point) on the student's own task: n distinct strings, the same list for the
same seed, another for another seed, none of the excluded prompts. Judge: rules on what it returned
(any task is right, so nothing is compared with the reference's prompts)."""
from _rules import strings

TODO = "Cell 3, make_prompts"
FIRST, AGAIN, OTHER = "300 prompts, seed 7", "300 prompts, seed 7 again", "300 prompts, seed 8"
HELD = "60 prompts, seed 7, excluding the first 150 of seed 7's"
FEW = "5 prompts, seed 3"


def probe(nb, observe):
    make = nb.make_prompts
    first = observe(FIRST, make, 300, seed=7)
    observe(AGAIN, make, 300, seed=7)
    observe(OTHER, make, 300, seed=8)
    observe(HELD, lambda: make(60, seed=7, exclude=list(first)[:150]))
    observe(FEW, make, 5, seed=3)


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


def _size(value) -> str:
    return f"{len(value)} strings" if strings(value) else f"a {type(value).__name__}, not a list of strings"
