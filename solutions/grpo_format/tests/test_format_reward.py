"""TODO 1, the scores (rules 1 to 3): some twenty responses, each scored on its own."""

TODO = "TODO 1 (format reward)"

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
)


def probe(nb, observe):
    for label, text in CASES:
        observe(label, nb.format_reward, [text])


_RULE_2 = ("nothing may come before <think> or after </answer>, and every tag sits on its own line as in the "
           "template: match the whole stripped response (re.fullmatch), not a part of it")
_RULE_3 = "a body may hold any text, but none of the four lower-case tags"
HINTS = {label: (_RULE_2 if "rule 2" in label else _RULE_3 if "rule 3" in label else None) for label, _ in CASES}
HINTS = {label: hint for label, hint in HINTS.items() if hint}
HINTS["surrounding whitespace (rule 1)"] = "strip leading and trailing whitespace (str.strip()) before matching"
HINTS["bodies of several lines (rule 3)"] = "a body may span several lines: let it match newlines too"
