"""TODO 1, the scores (rules 1 to 3): some twenty responses, each scored on its own, then all of them in one
call, in an order and with digits the grader draws for this run (``observe.nonce``; no digit is part of a
tag, so each response keeps the reference's score): the kernel cannot know that batch's expected scores
before the probe runs, so only a real format check earns the points."""
import random

from autograder.compare import difference, numeric

TODO = "TODO 1 (format reward)"
POINTS = 4
BATCH = "all the responses in one call, shuffled, with fresh digits"

OK = "<think>\nreasoning goes here\n</think>\n<answer>\nthe meaning of life is\n</answer>"
CASES = (
    ("the template itself", OK),
    ("surrounding whitespace (rule 1)", "\n\n  " + OK + "  \n"),
    ("bodies of several lines (rule 3)", "<think>\nline one\nline two\n</think>\n<answer>\n42\n</answer>"),
    ("empty bodies (rule 3)", "<think>\n\n</think>\n<answer>\n\n</answer>"),
    ("angle brackets that are not tags (rule 3)",
     "<think>\n12 + 3 = 15 and 2 < 3 > 1\n</think>\n<answer>\n15\n</answer>"),
    ("no newline after <think> (rule 2)", "<think>reasoning</think>\n<answer>\n1\n</answer>"),
    ("no newline between </think> and <answer> (rule 2)", "<think>\nreasoning\n</think><answer>\n1\n</answer>"),
    ("no newlines inside the answer block (rule 2)", "<think>\nreasoning\n</think>\n<answer>1</answer>"),
    ("a blank line between the blocks (rule 2)", "<think>\nreasoning\n</think>\n\n<answer>\n1\n</answer>"),
    ("a line after </answer> (rule 2)", OK + "\nHope this helps!"),
    ("text after </answer> on its line (rule 2)", OK + " Done."),
    ("a second answer block (rule 2)", OK + "\n<answer>\n2\n</answer>"),
    ("text before <think> (rule 2)", "Sure!\n" + OK),
    ("nested think tags (rule 3)", "<think>\n<think>\nnested\n</think>\n</think>\n<answer>\n1\n</answer>"),
    ("an answer block inside the reasoning (rule 3)",
     "<think>\nouter\n<answer>\n1\n</answer>\n</think>\n<answer>\n1\n</answer>"),
    ("nested answer tags (rule 3)", "<think>\nr\n</think>\n<answer>\n<answer>\n1\n</answer>\n</answer>"),
    ("a stray closing tag inside the answer (rule 3)", "<think>\nr\n</think>\n<answer>\n1\n</think>\n</answer>"),
    ("an answer block alone (rule 2)", "<answer>\n1\n</answer>"),
    ("a think block alone (rule 2)", "<think>\nr\n</think>"),
    ("upper-case tags (rule 3)", "<THINK>\nr\n</THINK>\n<ANSWER>\n1\n</ANSWER>"),
    ("the empty string", ""),
    ("plain text", "The answer is 15."),
    ("repeated <think> tags (rule 3)", "<think><think><think> x = 4\n</think>\n<answer>\n48\n</answer>"),
    ("a space between <think> and its newline (rule 2)", "<think> \nreasoning\n</think>\n<answer>\n1\n</answer>"),
    ("a tab between </think> and its newline (rule 2)", "<think>\nreasoning\n</think>\t\n<answer>\n1\n</answer>"),
)


def batch_order(nonce: int) -> list[int]:
    return random.Random(nonce).sample(range(len(CASES)), len(CASES))


def fresh_batch(nonce: int) -> list[str]:
    """Every case in the run's order, each digit replaced by one drawn from the run's number."""
    draw = random.Random(nonce + 1)
    return ["".join(str(draw.randrange(10)) if c.isdigit() else c for c in CASES[i][1]) for i in batch_order(nonce)]


def probe(nb, observe):
    for label, text in CASES:
        observe(label, nb.format_reward, [text])
    observe(BATCH, nb.format_reward, fresh_batch(observe.nonce))


def judge(check):
    for label, _ in CASES:
        check.same(label)
    single = [numeric(check.expected[label]) for label, _ in CASES]
    if not all(found and len(found[1]) == 1 for found in single):
        check.expect(False, f"{BATCH}: the reference's single scores could not be read (tell the course staff)")
        return
    first = check.expected[CASES[0][0]]
    values = [single[i][1][0] for i in batch_order(check.nonce)]
    expected = ({**first, "shape": [len(values)], "values": values} if first.get("type") == "array"
                else {"type": "list", "items": [{"type": "float", "value": float(v)} for v in values]})
    differs = difference(check.raw(BATCH), expected) if check.raw(BATCH) else "not reached"
    check.expect(differs is None, f"{BATCH}: {differs}. What to check: {HINTS[BATCH]}")


_RULE_2 = ("nothing may come before <think> or after </answer>, and every tag sits on its own line as in the "
           "template: match the whole stripped response (re.fullmatch), not a part of it")
_RULE_3 = "a body may hold any text, but none of the four lower-case tags"
HINTS = {label: (_RULE_2 if "rule 2" in label else _RULE_3 if "rule 3" in label else None) for label, _ in CASES}
HINTS = {label: hint for label, hint in HINTS.items() if hint}
HINTS = {**HINTS, BATCH: "score each response of a list on its own (one score per response, in order)"}
HINTS["surrounding whitespace (rule 1)"] = "strip leading and trailing whitespace (str.strip()) before matching"
HINTS["bodies of several lines (rule 3)"] = "a body may span several lines: let it match newlines too"
