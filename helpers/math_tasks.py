"""MATH-style prompts and the verified rewards used by the ``math_grpo`` notebook.

What lives here (scaffolding only, no TODO answers):

* ``load_prompt(name)`` / ``format_r1_zero(question)``: the prompt templates shipped in
  ``helpers/prompts/*.prompt`` (``r1_zero`` and ``question_only``), with a ``{question}``
  placeholder.
* ``r1_zero_reward_fn(response, ground_truth)``: the reward for one sampled response, as a
  dict ``{"format_reward", "answer_reward", "reward"}``. Equivalence of answers is decided by
  the ``math_verify`` package (numbers, fractions, LaTeX), behind a time budget that works
  from a Jupyter kernel's main thread and from worker threads alike (``helpers.time_limits``).
  ``question_only_reward_fn`` grades an answer written without tags.
* ``r1_zero_sft_text(record, rng)``: a prompt + short reasoning + answer string, used to warm
  a tiny model up on the r1_zero output format.

The notebook also reaches, under this module's name, what lives next door: where an answer is
(``extract_boxed_answer`` and friends, ``helpers.math_answers``) and the MATH data (``load_math(split,
profile)``, ``data_note(profile)``, ``helpers.math_data``).

The module is ``helpers.math_tasks``; it never shadows the standard ``math`` module because it is
only importable through its package.
"""
from __future__ import annotations

import functools
import logging
import random
import re
from collections.abc import Sequence
from pathlib import Path

from helpers import time_limits
from helpers.math_answers import (  # noqa: F401 - the notebook's names for them
    extract_answer_tag,
    extract_boxed_answer,
    extract_untagged_answer,
    unbox,
)
from helpers.math_data import (  # noqa: F401 - the notebook's names for them
    DATA_DIR,
    MATH_HUB_SOURCES,
    MATH_SOURCE_VARIABLE,
    data_note,
    load_math,
)

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"

# ---------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------


def available_prompts() -> list[str]:
    """Names of the prompt templates shipped in ``helpers/prompts``."""
    return sorted(p.stem for p in PROMPT_DIR.glob("*.prompt"))


def load_prompt(name: str) -> str:
    """Return the text of the prompt template ``name`` (e.g. ``"r1_zero"``).

    The template contains the placeholder ``{question}``. Fill it with
    ``template.replace("{question}", question)`` (safer than ``str.format`` because MATH
    problems are full of LaTeX braces) or use :func:`format_prompt`.
    """
    stem = str(name).removesuffix(".prompt")
    path = PROMPT_DIR / f"{stem}.prompt"
    if not stem or "/" in stem or "\\" in stem or not path.is_file():
        raise ValueError(
            f"unknown prompt {name!r}; available prompts: {', '.join(available_prompts())} "
            f"(files in {PROMPT_DIR})"
        )
    return path.read_text(encoding="utf-8")


def format_prompt(name: str, question: str) -> str:
    """The prompt ``name`` with ``question`` inserted."""
    return load_prompt(name).replace("{question}", question)


def format_r1_zero(question: str) -> str:
    """The ``r1_zero`` prompt for ``question``; it ends with ``Assistant: <think>``."""
    return format_prompt("r1_zero", question)


# ---------------------------------------------------------------------------------------
# Reward
# ---------------------------------------------------------------------------------------

#: Longest answer (characters, after extraction) that is handed to math_verify. Real MATH
#: answers are far shorter; long ones only cost time (parsing is super-linear in length and
#: nesting) and are scored 0.
MAX_ANSWER_CHARS = 256
#: Deepest bracket nesting handed to math_verify (parsing and simplifying slow down with
#: depth: ten nested ``\\sin(\\cos(...))`` took 9 s).
MAX_NESTING = 8
#: Wall-clock budget for the comparison in one reward call. From the main thread on POSIX (a
#: Jupyter kernel's cells included) a SIGALRM timer interrupts the work; from any other
#: thread the work runs in a helper thread that is abandoned (left to finish in the
#: background) once the budget is spent.
REWARD_TIMEOUT_S = 3.0

_ZERO = {"format_reward": 0.0, "answer_reward": 0.0, "reward": 0.0}

MATH_VERIFY_INSTALL = 'pip install "math-verify>=0.8"'


class MissingDependencyError(ImportError):
    """A package the reward needs is not installed; the message says how to install it."""


def require_math_verify() -> None:
    """Raise :class:`MissingDependencyError` (one line, with the install command) when
    ``math_verify`` cannot be imported. Without it no answer could ever be judged correct, so
    a missing install must stop the run rather than turn every reward into 0."""
    try:
        import math_verify  # noqa: F401
    except ImportError as error:
        raise MissingDependencyError(
            f"math-verify is not installed ({error}), so answers cannot be checked: run  {MATH_VERIFY_INSTALL}  "
            "(on Colab: run the notebook's first cell), then restart the kernel"
        ) from None


def _max_nesting(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
    return deepest


def _exponent_at(text: str, i: int) -> str:
    """The exponent that follows the ``^`` at index ``i`` (a braced group or one token)."""
    j = i + 1
    while j < len(text) and text[j] == " ":
        j += 1
    if j < len(text) and text[j] == "{":
        depth = 0
        for k in range(j, len(text)):
            depth += text[k] == "{"
            depth -= text[k] == "}"
            if depth == 0:
                return text[j : k + 1]
        return text[j:]
    match = re.match(r"\\?[A-Za-z]+|\d+|.", text[j:])
    return match.group(0) if match else ""


def _too_costly(answer: str) -> bool:
    """Screens for answers that make sympy run for minutes (measured, see tests).

    ``9^{9^{9}}``, ``10^{10^{8}}``, ``10000000!`` or ``\\binom{10^6}{...}`` are short but
    ask for astronomically large integers; deep nesting and very long strings make the LaTeX
    parser slow. None of them is a plausible MATH answer, so they simply score 0.
    """
    if len(answer) > MAX_ANSWER_CHARS or _max_nesting(answer) > MAX_NESTING:
        return True
    text = answer.replace("**", "^")
    if text.count("^") > 6:
        return True
    for i, ch in enumerate(text):
        if ch == "^":
            exponent = _exponent_at(text, i)
            if "^" in exponent or "!" in exponent or re.search(r"\d{5,}", exponent):
                return True
            # a tower written without braces, ``9^9^9``, reads as 9^(9^9)
            follows = text[i + 1 :].lstrip(" ")[len(exponent) :].lstrip(" ")
            if follows.startswith("^"):
                return True
    if re.search(r"\d{6,}\s*\}?\s*!", text):
        return True
    if ("\\binom" in text or "\\choose" in text) and re.search(r"\d{5,}", text):
        return True
    return False


_STRING_FIXES = (
    ("\\left", ""),
    ("\\right", ""),
    ("\\dfrac", "\\frac"),
    ("\\tfrac", "\\frac"),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("\\%", ""),
    ("%", ""),
    ("\\!", ""),
    ("\\,", ""),
    ("\\;", ""),
    ("\\ ", ""),
    ("$", ""),
)


def _normalize_string(answer: str) -> str:
    """A cheap textual normal form used before (and as a fallback to) math_verify."""
    text = answer
    for old, new in _STRING_FIXES:
        text = text.replace(old, new)
    text = re.sub(r"\\text\{\s*([^{}]*?)\s*\}", r"\1", text)
    text = re.sub(r"\s+", "", text)
    text = text.rstrip(".")
    # a single-letter assignment such as ``x=6`` compares by its right-hand side
    text = re.sub(r"^[A-Za-z]=", "", text)
    return text


def _candidate(text: str) -> str:
    """The part of an answer to compare: the last boxed content if any, else the text."""
    boxed = extract_boxed_answer(text)
    answer = boxed if boxed is not None else text
    answer = answer.strip()
    # ``$...$`` and ``\(...\)`` wrappers: math_verify gets its own ``$`` below
    if len(answer) >= 2 and answer.startswith("$") and answer.endswith("$"):
        answer = answer.strip("$").strip()
    if answer.startswith("\\(") and answer.endswith("\\)"):
        answer = answer[2:-2].strip()
    return answer


@functools.lru_cache(maxsize=1)
def _warm_math_verify() -> None:
    """Import math_verify and run one parse, outside any time budget.

    The first call builds the LaTeX parser (about a second); interrupting an import or that
    set-up halfway with our timer could leave a module half-initialized for the session.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    verify(
        parse("$\\frac{1}{2}$", [LatexExtractionConfig()], parsing_timeout=None),
        parse("$0.5$", [LatexExtractionConfig(), ExprExtractionConfig()], parsing_timeout=None),
        timeout_seconds=None,
    )


@functools.lru_cache(maxsize=8192)
def _parse(answer: str) -> tuple:
    """math_verify's parse of one answer, wrapped in ``$`` so bare LaTeX is recognized.

    Without the ``$`` math_verify does not read ``\\dfrac{3}{4}`` or ``x+1`` at all and
    reads ``2\\sqrt{2}`` as ``2``; with it both LaTeX and plain forms (``0.5``, ``1/2``) parse.
    Cached: the same gold answer is parsed once per group of rollouts.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    config = [LatexExtractionConfig(), ExprExtractionConfig()]
    parsed = parse(f"${answer}$", config, parsing_timeout=None)
    if not parsed:
        parsed = parse(answer, config, parsing_timeout=None)
    return tuple(parsed)


def _answers_match(predicted: str, golds: Sequence[str], fast: bool) -> bool:
    from math_verify import verify

    if not predicted or _too_costly(predicted):
        return False
    pred_norm = _normalize_string(predicted)
    usable = [g for g in golds if g and not _too_costly(g)]
    if pred_norm and any(_normalize_string(g) == pred_norm for g in usable):
        return True
    pred_parsed = list(_parse(predicted))
    if not pred_parsed:
        return False
    for gold in usable:
        gold_parsed = list(_parse(gold))
        if not gold_parsed:
            continue
        if verify(gold_parsed, pred_parsed, timeout_seconds=None):
            return True
        if not fast and verify(gold_parsed, pred_parsed, strict=False, timeout_seconds=None):
            return True
    return False


def _gold_candidates(ground_truth) -> list[str]:
    if isinstance(ground_truth, (list, tuple)):
        items = list(ground_truth)
    else:
        items = [ground_truth]
    golds = []
    for item in items:
        if item is None:
            continue
        text = item if isinstance(item, str) else str(item)
        golds.append(_candidate(text))
    return golds


def r1_zero_reward_fn(response: str, ground_truth, fast: bool = True) -> dict[str, float]:
    """Reward one response to an ``r1_zero`` prompt.

    Args:
        response: the generated text *after* the prompt (the prompt already opened
            ``<think>``), e.g. ``" 7 + 5 = 12 </think> <answer> 12 </answer>"``.
        ground_truth: the reference answer: ``"12"``, ``"\\\\boxed{12}"``, ``"\\\\frac{1}{2}"``,
            a number, or a list of acceptable answers (any one may match).
        fast: ``True`` compares with math_verify in strict mode. ``False`` also tries a
            lenient comparison (variables matched by position, sets comparable with tuples),
            which is slower and occasionally too generous.

    Returns:
        ``{"format_reward", "answer_reward", "reward"}``, each 0.0 or 1.0.

        * format: ``"</think> <answer>"`` (one space) and a closing ``</answer>`` occur;
        * answer: the text of the *last* ``<answer>...</answer>``, reduced to its last
          ``\\boxed{...}`` when it has one, equals the ground truth: same normalized string,
          or equivalent for math_verify (``0.5`` = ``\\frac{1}{2}`` = ``1/2``);
        * reward: the answer reward when the format holds, else 0.

    Raises :class:`MissingDependencyError` when math-verify is not installed (a reward of 0
    for every answer would silently train on nothing). Otherwise never raises for bad input;
    answers longer than ``MAX_ANSWER_CHARS``, nested deeper than
    ``MAX_NESTING`` or asking for astronomically large numbers score 0 without being parsed.
    The comparison is also cut off after ``REWARD_TIMEOUT_S`` seconds (answer reward 0): by a
    SIGALRM timer from the main thread (a notebook cell), by abandoning a helper thread from
    any other thread. math_verify's own timeouts are always passed as ``None``: they rely on
    ``signal.alarm``, which raises outside the main thread.
    """
    require_math_verify()
    try:
        if not isinstance(response, str):
            return dict(_ZERO)
        answer_text = extract_answer_tag(response)
        if "</think> <answer>" not in response or answer_text is None:
            return dict(_ZERO)
        result = {"format_reward": 1.0, "answer_reward": 0.0, "reward": 0.0}
        predicted = _candidate(answer_text)
        golds = _gold_candidates(ground_truth)
        _warm_math_verify()
        if time_limits.can_use_alarm():
            try:
                with time_limits.time_budget(REWARD_TIMEOUT_S):
                    correct = _answers_match(predicted, golds, fast)
            except time_limits.Timeout:
                correct = False
        else:
            args = (predicted, golds, fast)
            correct = bool(time_limits.call_with_deadline(_answers_match, args, REWARD_TIMEOUT_S))
        if correct:
            result["answer_reward"] = 1.0
            result["reward"] = 1.0
        return result
    except Exception:  # a reward must never take a training run down
        logging.getLogger(__name__).debug("r1_zero_reward_fn failed", exc_info=True)
        return dict(_ZERO)


def _quiet_math_verify() -> None:
    """math_verify warns once that its timeouts are off; we time calls ourselves."""
    logger = logging.getLogger("math_verify")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.ERROR)


_quiet_math_verify()

# ---------------------------------------------------------------------------------------
# Warm-up text for the tiny model
# ---------------------------------------------------------------------------------------


def _short_reasoning(solution: str, answer: str, rng: random.Random) -> str:
    """A one-line reasoning from a solution: its boxes unwrapped, ``$`` dropped, trimmed."""
    text = unbox(solution)
    text = re.sub(r"\s+", " ", text.replace("$", "")).strip()
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    first = sentences[0] if sentences else f"The answer is {answer}."
    if len(first) > 200:
        first = first[:200].rsplit(" ", 1)[0] + " ..."
    choice = rng.random()
    if choice < 0.6:
        return first
    if choice < 0.85:
        return f"{first} So the answer is {answer}."
    return f"Let me work it out. {first}"


def r1_zero_sft_text(record: dict, rng: random.Random | None = None) -> str:
    """``"{prompt} {reasoning} </think> <answer> {answer} </answer>"`` for one record.

    ``prompt`` is ``format_r1_zero(record["problem"])`` (it ends in ``<think>``), so
    ``text[len(prompt):]`` is a response that earns reward 1 from
    :func:`r1_zero_reward_fn`. ``rng`` picks among a few phrasings of the reasoning.
    """
    rng = rng if rng is not None else random.Random(0)
    prompt = format_r1_zero(record["problem"])
    answer = record.get("answer") or extract_boxed_answer(record.get("solution", "")) or ""
    reasoning = _short_reasoning(record.get("solution", ""), answer, rng)
    return f"{prompt} {reasoning} </think> <answer> {answer} </answer>"


# ---------------------------------------------------------------------------------------
# Reward for answers written without tags (the question_only prompt)
# ---------------------------------------------------------------------------------------

def _timed_answers_match(predicted: str, golds: list[str], fast: bool) -> bool:
    """``_answers_match`` under the same time budget as :func:`r1_zero_reward_fn`."""
    if time_limits.can_use_alarm():
        try:
            with time_limits.time_budget(REWARD_TIMEOUT_S):
                return _answers_match(predicted, golds, fast)
        except time_limits.Timeout:
            return False
    return bool(time_limits.call_with_deadline(_answers_match, (predicted, golds, fast), REWARD_TIMEOUT_S))


def question_only_reward_fn(response: str, ground_truth, fast: bool = True) -> dict[str, float]:
    """Reward for a response to the ``question_only`` prompt, which asks for no tags.

    ``r1_zero_reward_fn`` gives 0 to any response without ``</think> <answer>``, so it cannot
    compare the two prompts. This reward grades the answer wherever it is written
    (:func:`extract_untagged_answer`) with the same equivalence test as ``r1_zero_reward_fn``.

    Returns ``{"format_reward", "answer_reward", "reward"}``: format 1 when an answer could be
    extracted at all, answer 1 when it matches ``ground_truth``, reward = answer. Lenient on
    purpose: a response that merely ends with the right number earns 1. Raises
    :class:`MissingDependencyError` when math-verify is not installed.
    """
    require_math_verify()  # a missing math-verify must raise here, not score every answer 0
    try:
        answer = extract_untagged_answer(response)
        _warm_math_verify()
        if answer is None:
            return dict(_ZERO)
        correct = _timed_answers_match(_candidate(answer), _gold_candidates(ground_truth), fast)
        return {"format_reward": 1.0, "answer_reward": float(correct), "reward": float(correct)}
    except Exception:  # a reward must never take a training run down
        logging.getLogger(__name__).debug("question_only_reward_fn failed", exc_info=True)
        return dict(_ZERO)
