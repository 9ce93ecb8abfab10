"""Where an answer is in a MATH solution or a model's response: the last ``\\boxed{...}``, the last
``<answer>...</answer>``, or (for a response without tags) the last number. Plain text handling, no
equivalence (``math_tasks`` decides that with math-verify)."""
from __future__ import annotations

import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")


def _last_box_start(text: str) -> tuple[int, str] | None:
    """Index and name of the last ``\\boxed`` or ``\\fbox`` command in ``text``."""
    best = None
    for command in _BOX_COMMANDS:
        i = text.rfind(command)
        # ``\boxedfoo`` is some other command; keep looking further left
        while i >= 0:
            after = text[i + len(command) : i + len(command) + 1]
            if not after.isalpha():
                break
            i = text.rfind(command, 0, i)
        if i >= 0 and (best is None or i > best[0]):
            best = (i, command)
    return best


def _last_box_span(text: str) -> tuple[int, int, str] | None:
    """``(start, end, content)`` of the last well-formed box in ``text``, or ``None``.

    ``text[start:end]`` is the whole ``\\boxed{...}`` command, ``content`` its argument.
    """
    found = _last_box_start(text)
    if found is None:
        return None
    start, command = found
    i = start + len(command)
    if text[i : i + 1] == " " and text[i + 1 : i + 2] not in (" ", "{", ""):
        # ``\boxed 5``: the answer runs to the next ``$`` or the end of the line
        match = re.match(r" ([^$\n]*)", text[i:])
        content = match.group(1)
        return (start, i + match.end(), content.strip()) if content.strip() else None
    while text[i : i + 1] == " ":
        i += 1
    if text[i : i + 1] != "{":
        return None
    depth = 0
    for j in range(i, len(text)):
        ch = text[j]
        escaped = text[j - 1 : j] == "\\"
        if ch == "{" and not escaped:
            depth += 1
        elif ch == "}" and not escaped:
            depth -= 1
            if depth == 0:
                return start, j + 1, text[i + 1 : j].strip()
    return None


def extract_boxed_answer(solution: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``) in ``solution``.

    Braces are matched, so ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``. The brace-less
    form ``\\boxed 5`` that some MATH solutions use gives ``5``. Returns ``None`` when there
    is no box or its braces never close.
    """
    if not isinstance(solution, str):
        return None
    span = _last_box_span(solution)
    return None if span is None else span[2]


def unbox(text: str) -> str:
    """``text`` with every well-formed box replaced by its content."""
    for _ in range(100):
        span = _last_box_span(text)
        if span is None:
            break
        start, end, content = span
        text = text[:start] + content + text[end:]
    return text


_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def extract_answer_tag(response: str) -> str | None:
    """Text inside the last complete ``<answer>...</answer>`` pair, or ``None``."""
    matches = _ANSWER_TAG.findall(response)
    return matches[-1] if matches else None


#: The last number or fraction in a response: ``12``, ``-3.5``, ``7/2``, ``\frac{7}{2}``.
_FINAL_NUMBER = re.compile(r"\\d?frac\{[^{}]*\}\{[^{}]*\}|-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?")


def extract_untagged_answer(response: str) -> str | None:
    """The final answer of a response that may lack the r1_zero tags, or ``None``.

    In order: the text of the last complete ``<answer>...</answer>``; else the content of the
    last ``\\boxed{...}`` (how Qwen2.5-Math ends a solution to a bare question); else the last
    number or fraction in the response (``"So it is 9."`` gives ``"9"``).
    """
    if not isinstance(response, str):
        return None
    tagged = extract_answer_tag(response)
    if tagged is not None and tagged.strip():
        return tagged.strip()
    boxed = extract_boxed_answer(response)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    numbers = _FINAL_NUMBER.findall(response)
    return numbers[-1].strip() if numbers else None
