"""MATH-style prompts, data and the verified reward used by the ``math_grpo`` notebook.

What lives here (scaffolding only, no TODO answers):

* ``load_prompt(name)`` / ``format_r1_zero(question)``: the prompt templates shipped in
  ``helpers/prompts/*.prompt`` (``r1_zero`` and ``question_only``), with a ``{question}``
  placeholder.
* ``r1_zero_reward_fn(response, ground_truth)``: the reward for one sampled response, as a
  dict ``{"format_reward", "answer_reward", "reward"}``. Equivalence of answers is decided by
  the ``math_verify`` package (numbers, fractions, LaTeX), behind a time budget that works
  from a Jupyter kernel's main thread and from worker threads alike.
* ``extract_boxed_answer(solution)``: the gold answer inside the last ``\\boxed{...}``.
* ``load_math(split, profile)``: MATH from the hub (profile ``full``) or the small synthetic
  set shipped in ``helpers/data`` (profile ``tiny``); ``data_note(profile)`` says where the
  problems come from and under which terms (printed by the notebook where it loads them).
* ``r1_zero_sft_text(record, rng)``: a prompt + short reasoning + answer string, used to warm
  a tiny model up on the r1_zero output format.

The module is ``helpers.math_tasks``; it never shadows the standard ``math`` module because it is
only importable through its package.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import random
import re
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
DATA_DIR = Path(__file__).resolve().parent / "data"

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
# Answer extraction
# ---------------------------------------------------------------------------------------

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


def _unbox(text: str) -> str:
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


class _RewardTimeout(BaseException):
    """Raised by our own timer; a BaseException so math_verify's handlers let it through."""


def _can_use_alarm() -> bool:
    return (
        os.name == "posix"
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )


@contextlib.contextmanager
def _time_budget(seconds: float) -> Iterator[None]:
    """Raise ``_RewardTimeout`` after ``seconds`` (main thread on POSIX); no-op elsewhere.

    One timer covers the whole reward call. math_verify's own per-step timeouts are always
    switched off (``parsing_timeout=None``, ``timeout_seconds=None``): they use
    ``signal.alarm`` too, and finishing one would cancel this outer timer.
    """
    if not _can_use_alarm() or not seconds or seconds <= 0:
        yield
        return

    def _on_alarm(signum, frame):  # noqa: ARG001
        raise _RewardTimeout()

    try:
        old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main interpreter after all
        yield
        return
    started = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:  # somebody else's timer was running: give back what is left
            remaining = max(old_delay - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, old_interval)


def _call_with_deadline(fn, args: tuple, seconds: float):
    """``fn(*args)`` in a daemon thread; ``None`` if it is not done after ``seconds``.

    Used off the main thread, where no signal can interrupt math_verify. A call that runs
    over keeps running in the background (Python threads cannot be killed) but the caller
    gets its answer on time; the screens in ``_too_costly`` make that rare.
    """
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException:  # noqa: BLE001  (reported as "no value")
            pass

    worker = threading.Thread(target=target, name="r1_zero_reward_fn", daemon=True)
    worker.start()
    worker.join(seconds)
    return box.get("value")


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
        if _can_use_alarm():
            try:
                with _time_budget(REWARD_TIMEOUT_S):
                    correct = _answers_match(predicted, golds, fast)
            except _RewardTimeout:
                correct = False
        else:
            args = (predicted, golds, fast)
            correct = bool(_call_with_deadline(_answers_match, args, REWARD_TIMEOUT_S))
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
# Data
# ---------------------------------------------------------------------------------------

#: Hub datasets tried in order for the ``full`` profile. Each entry: (dataset id, configs or
#: None). The MATH set has been re-hosted several times; add a mirror here when one vanishes.
MATH_HUB_SOURCES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    (
        "EleutherAI/hendrycks_math",
        (
            "algebra",
            "counting_and_probability",
            "geometry",
            "intermediate_algebra",
            "number_theory",
            "prealgebra",
            "precalculus",
        ),
    ),
    ("hendrycks/competition_math", None),
    ("qwedsacf/competition_math", None),
)

_SPLIT_ALIASES = {
    "train": "train",
    "validation": "test",
    "val": "test",
    "valid": "test",
    "test": "test",
}


def _record(row: dict) -> dict:
    solution = row.get("solution", "")
    return {
        "problem": row.get("problem", ""),
        "solution": solution,
        "answer": row.get("answer") or extract_boxed_answer(solution) or "",
        "level": row.get("level", ""),
        "type": row.get("type", ""),
    }


def _is_held_out(problem: str) -> bool:
    """Deterministic 5 000-ish / 7 500-ish split for a mirror that only has ``train``."""
    return int(hashlib.sha1(problem.encode("utf-8")).hexdigest(), 16) % 5 < 2


def _load_math_from_hub(split: str) -> list[dict]:
    import datasets

    hub_split = _SPLIT_ALIASES[split]
    errors = []
    for dataset_id, configs in MATH_HUB_SOURCES:
        try:
            rows: list[dict] = []
            for config in configs or (None,):
                available = datasets.get_dataset_split_names(dataset_id, config)
                if hub_split in available:
                    rows.extend(datasets.load_dataset(dataset_id, config, split=hub_split))
                elif available == ["train"]:
                    everything = datasets.load_dataset(dataset_id, config, split="train")
                    keep_held_out = hub_split == "test"
                    rows.extend(
                        r for r in everything if _is_held_out(r["problem"]) == keep_held_out
                    )
                else:
                    raise ValueError(f"no split {hub_split!r} (has {available})")
            return [_record(dict(r)) for r in rows]
        except Exception as err:  # try the next mirror
            errors.append(f"{dataset_id}: {type(err).__name__}: {err}"[:300])
    offline = os.environ.get("HF_DATASETS_OFFLINE") == "1" or os.environ.get("HF_HUB_OFFLINE") == "1"
    raise RuntimeError(
        "could not load the MATH dataset from the Hugging Face hub.\n  "
        + "\n  ".join(errors)
        + "\nWhat to do: "
        + (
            "HF_DATASETS_OFFLINE / HF_HUB_OFFLINE is set, so only an already cached copy can "
            "be used. Run once with network access to fill the cache, or "
            if offline
            else "check the network connection, or "
        )
        + "use the shipped stand-in with profile='tiny' (COURSE_PROFILE=tiny)."
    )


def _load_math_tiny(split: str) -> list[dict]:
    name = "train" if _SPLIT_ALIASES[split] == "train" else "val"
    path = DATA_DIR / f"math_tiny_{name}.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [_record(json.loads(line)) for line in handle if line.strip()]


MATH_SOURCE_VARIABLE = "COURSE_MATH_SOURCE"

#: Where MATH comes from and on what terms. Hendrycks et al. release MATH under the MIT licence
#: (https://github.com/hendrycks/math; the hub mirrors in MATH_HUB_SOURCES carry the same tag).
#: Its problems are taken from mathematics competitions (AMC 10, AMC 12, AIME and others), and
#: the course asks students, as the assignment it adapts does, to use the set for this
#: assignment only and not to redistribute it.
MATH_NOTE = (
    "MATH (Hendrycks et al. 2021, arXiv:2103.03874): 12,500 competition problems (AMC 10, AMC 12, AIME, ...) "
    "with worked solutions, released by its authors under the MIT licence (github.com/hendrycks/math). "
    "Use it for this assignment only and do not redistribute it (your submission needs none of it)."
)
#: The tiny profile's stand-in: synthetic problems written by the kit, not taken from MATH.
TINY_MATH_NOTE = (
    "tiny-MATH: synthetic arithmetic written from templates by the course kit (sums, differences, products, "
    "fractions with one denominator, one-step equations); it holds no MATH problem and ships with the kit."
)


def data_note(profile: str) -> str:
    """One line on where ``load_math(..., profile)`` takes its problems from and on what terms."""
    if profile == "tiny":
        return TINY_MATH_NOTE
    source = os.environ.get(MATH_SOURCE_VARIABLE)
    where = f"read from {source}" if source else f"from the Hugging Face hub ({MATH_HUB_SOURCES[0][0]} or a mirror)"
    return f"{MATH_NOTE} Loaded {where}."


def _load_math_local(folder: str, split: str) -> list[dict]:
    """``train.jsonl`` or ``test.jsonl`` from a local folder (a course mirror of MATH, or an
    offline GPU machine): one JSON object per line with ``problem`` and ``solution``."""
    name = "train" if _SPLIT_ALIASES[split] == "train" else "test"
    path = Path(folder) / f"{name}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{MATH_SOURCE_VARIABLE}={folder} has no {name}.jsonl: put MATH's {name} split there "
                                "as JSON lines with 'problem' and 'solution', or unset the variable")
    with path.open(encoding="utf-8") as handle:
        return [_record(json.loads(line)) for line in handle if line.strip()]


def load_math(split: str, profile: str, limit: int | None = None) -> list[dict]:
    """MATH examples as dicts with ``problem``, ``solution``, ``answer`` (plus ``level``,
    ``type``).

    Args:
        split: ``"train"``, or ``"validation"`` / ``"test"`` (both are MATH's 5 000-problem
            test set; the tiny profile has one held-out file for them).
        profile: ``"full"`` downloads MATH with ``datasets`` (mirrors in
            ``MATH_HUB_SOURCES``), or reads ``$COURSE_MATH_SOURCE/{train,test}.jsonl`` when that
            variable names a local folder; ``"tiny"`` reads
            ``helpers/data/math_tiny_{train,val}.jsonl``, short synthetic arithmetic a
            ~1M-parameter model can learn.
        limit: keep only the first ``limit`` examples.

    Licence: MATH is released by its authors under the MIT licence; its problems come from
    mathematics competitions, and the course uses it for this assignment only (``MATH_NOTE``).
    The tiny files are synthetic, generated by the kit's ``tools/make_math_tiny.py``, and hold no
    MATH problem (``TINY_MATH_NOTE``). ``data_note(profile)`` returns the line that applies.
    """
    if split not in _SPLIT_ALIASES:
        raise ValueError(f"unknown split {split!r}; use one of {sorted(_SPLIT_ALIASES)}")
    if profile == "tiny":
        records = _load_math_tiny(split)
    elif profile == "full" and os.environ.get(MATH_SOURCE_VARIABLE):
        records = _load_math_local(os.environ[MATH_SOURCE_VARIABLE], split)
    elif profile == "full":
        records = _load_math_from_hub(split)
    else:
        raise ValueError(f"unknown profile {profile!r}; use 'tiny' or 'full'")
    return records if limit is None else records[:limit]


# ---------------------------------------------------------------------------------------
# Warm-up text for the tiny model
# ---------------------------------------------------------------------------------------


def _short_reasoning(solution: str, answer: str, rng: random.Random) -> str:
    """A one-line reasoning from a solution: its boxes unwrapped, ``$`` dropped, trimmed."""
    text = _unbox(solution)
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


def _timed_answers_match(predicted: str, golds: list[str], fast: bool) -> bool:
    """``_answers_match`` under the same time budget as :func:`r1_zero_reward_fn`."""
    if _can_use_alarm():
        try:
            with _time_budget(REWARD_TIMEOUT_S):
                return _answers_match(predicted, golds, fast)
        except _RewardTimeout:
            return False
    return bool(_call_with_deadline(_answers_match, (predicted, golds, fast), REWARD_TIMEOUT_S))


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
