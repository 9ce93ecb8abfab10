"""Hidden tests: ordinary Python files, probed in the kernel and judged here, in the grader.

Each graded test cell's hidden part is one call, ``hidden_test("<assignment>", "<test>")``, naming
``solutions/<assignment>/tests/<test>.py`` (``autograder.hidden_test_files``: how it is read). That file holds

- ``probe(nb, observe)``: runs in the student's kernel. It builds inputs from seeds and small
  constructions, calls the notebook's functions (``nb.name``) and records what they return with
  ``observe(label, fn, *args)`` or ``observe.value(label, value)``;
- ``TODO`` (the cell's title in messages) and ``HINTS`` (label -> what to check), shown on failure;
- optionally ``judge(check)``, for checks that are rules rather than equality with the reference
  (a task the student designs, an artifact's measurement).

Only ``probe`` and what it uses (:func:`kernel_source`) is sent to the kernel. The expected values
are the reference's own observations (``tests/expected.json``, written by ``python -m autograder
generate`` from the solution notebook, see ``autograder.authoring.expected``), compared with
:func:`autograder.compare.difference`.
"""
from __future__ import annotations

import contextlib
import secrets
import signal
import threading
from dataclasses import dataclass, field

from autograder.compare import describe, difference, well_formed_array
from autograder.hidden_test_files import (  # noqa: F401 - the grader's names for them
    EXPECTED_FILE,
    HIDDEN_CALL,
    HiddenTest,
    kernel_source,
    load,
    named_in,
    read_expected,
)

NOT_REACHED = "not reached (an earlier step failed)"


class Unusable(Exception):
    """A judge asked for a value the student's code did not produce (it raised, or never ran)."""


def decoded(report: dict) -> dict:
    """label -> decoded value of a probe's report (labels whose call raised are left out)."""
    found = {}
    for label, observation in (report.get("observations") or {}).items():
        if isinstance(observation, dict) and observation.get("type") != "error":
            found[label] = decode(observation)
    return found


MAX_VALUES = 2_000_000
"""Scalars one report may hold in all (the kernel sends at most 200,000; a forged report gets no more)."""
MAX_STRING = 200_000
MAX_DEPTH = 12
KINDS = {"int", "float", "bool", "str", "none", "array", "list", "tuple", "dict", "object", "error"}


class Malformed(ValueError):
    """A report the judges must never see: what is wrong with it, in one line."""


def observe_task(test: HiddenTest, report: dict, runner) -> None:
    """Add ``test``'s task observations (made outside the kernel by ``runner``) to ``report``, over any label the
    kernel sent."""
    try:
        found = test.module.task_observations(decoded(report), runner)
    except Unusable:
        return
    report["observations"].update(found)


def validate(report: dict) -> None:
    """Raise :class:`Malformed` unless every observation of ``report`` is a well-formed value of a known type
    within the size budget: the one place a report is checked before any judge (or decoding) reads it."""
    budget = [MAX_VALUES]
    for label, observation in report.get("observations", {}).items():
        if not isinstance(label, str) or len(label) > 1000:
            raise Malformed("a label that is not a short string")
        _check(observation, 0, budget)
    error = report.get("error")
    if error is not None and not (isinstance(error, dict) and error.get("type") == "error"):
        raise Malformed("its error is not an error observation")


def _spend(budget: list, count: int) -> None:
    budget[0] -= count
    if budget[0] < 0:
        raise Malformed(f"it holds more than {MAX_VALUES:,} values")


def _check(observation, depth: int, budget: list) -> None:
    if not isinstance(observation, dict) or observation.get("type") not in KINDS:
        raise Malformed("an observation of unknown type")
    if depth > MAX_DEPTH:
        raise Malformed("an observation nested too deeply")
    kind = observation["type"]
    _spend(budget, 1)
    if kind == "array":
        values, shape = observation.get("values"), observation.get("shape")
        if not well_formed_array(values, shape):
            raise Malformed("an array whose shape does not match its values")
        _spend(budget, len(values))
        if not all(type(v) in (int, float, bool) or v is None for v in values):
            raise Malformed("an array holding something other than numbers")
    elif kind in ("list", "tuple"):
        items = observation.get("items")
        if not isinstance(items, list):
            raise Malformed(f"a {kind} without items")
        for item in items:
            _check(item, depth + 1, budget)
    elif kind == "dict":
        items = observation.get("items")
        if not isinstance(items, dict):
            raise Malformed("a dict without items")
        for item in items.values():
            _check(item, depth + 1, budget)
    elif kind in ("int", "float", "bool"):
        if type(observation.get("value")) not in (int, float, bool):
            raise Malformed(f"a {kind} that is not a number")
    elif kind == "str":
        if not isinstance(observation.get("value"), str) or len(observation["value"]) > MAX_STRING:
            raise Malformed("a string that is not one or is too long")
    for key in ("message", "error", "class", "repr", "dtype", "library"):
        if key in observation and (not isinstance(observation[key], str) or len(observation[key]) > MAX_STRING):
            raise Malformed(f"an observation whose {key} is not a short string")


def decode(observation):
    """Python values from an observation: numbers, str, lists, dicts; arrays as nested lists."""
    kind = observation.get("type")
    if kind == "array":
        values, shape = _checked_array(observation)
        for size in reversed(shape[1:]):
            values = [values[i:i + size] for i in range(0, len(values), size)] if size else []
        return values if shape else values[0]
    if kind in ("list", "tuple"):
        return [decode(item) for item in observation["items"]]
    if kind == "dict":
        return {key: decode(value) for key, value in observation["items"].items()}
    if kind == "object":
        return observation
    return observation.get("value")


def _checked_array(observation: dict) -> tuple[list, list[int]]:
    """(values, shape) of an array observation, refused unless they agree (``compare.well_formed_array``): a
    forged report must not make the grader regroup a small list into a huge nested one."""
    values, shape = observation.get("values"), observation.get("shape")
    if not well_formed_array(values, shape):
        raise Unusable("the reported array is malformed (its shape does not match its values)")
    return values, shape


@dataclass
class Check:
    """What a test file's ``judge(check)`` works with."""
    grade_id: str
    observed: dict
    expected: dict
    hints: dict
    measurement: dict | None = None
    nonce: int = 0
    """The number the grader drew for this probe run (``observe.nonce`` in the probe)."""
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    passed: int = 0
    errors: list = field(default_factory=list)
    """What the failing calls raised, for one line when every check raised the same."""

    def raw(self, label: str) -> dict | None:
        return self.observed.get(label)

    def got(self, label: str):
        """The student's value for ``label``; a judge that asks for a value that raised stops there."""
        found = self.observed.get(label)
        if not isinstance(found, dict):
            raise Unusable(f"{label}: {NOT_REACHED}")
        if found.get("type") == "error":
            raise Unusable(f"{label}: {describe(found)}")
        return decode(found)

    def want(self, label: str):
        return decode(self.expected[label])

    def expect(self, condition: bool, message: str) -> bool:
        if condition:
            self.passed += 1
        else:
            self.failures.append(message)
        return bool(condition)

    def matches(self, label: str) -> bool:
        """Whether the student's value equals the reference's, without counting it as a check."""
        found = self.observed.get(label)
        return isinstance(found, dict) and label in self.expected and difference(found, self.expected[label]) is None

    def same(self, label: str) -> bool:
        """The default check of one label: the student's value equals the reference's."""
        found = self.observed.get(label)
        if not isinstance(found, dict):
            return self.expect(False, f"{label}: {NOT_REACHED}")
        differs = difference(found, self.expected[label])
        if differs is not None and found.get("type") == "error":
            self.errors.append(differs)
        hint = self.hints.get(label) if found.get("error") != "NotImplementedError" else None
        return self.expect(differs is None, f"{label}: {differs}" + (f". What to check: {hint}" if hint else ""))

    def same_all(self, skip=()) -> None:
        for label in self.expected:
            if label not in skip:
                self.same(label)


@dataclass
class Verdict:
    score: float
    """Fraction of the cell's points, 0 to 1."""
    failures: list
    notes: list = field(default_factory=list)
    cause: str = "AssertionError"
    """The error name a failing cell shows: ``MemoryError`` when the kernel ran out of memory in a check,
    ``CellTimeoutError`` when it ran past the time limit (the submission's status follows it)."""


MEMORY_ERRORS = ("MemoryError", "OutOfMemoryError")


def _cause(report) -> str:
    """MemoryError when a check died of memory (in a call or in the probe itself), else AssertionError."""
    if not isinstance(report, dict):
        return "AssertionError"
    found = [report.get("error")] + list((report.get("observations") or {}).values())
    return "MemoryError" if any(isinstance(o, dict) and o.get("error") in MEMORY_ERRORS for o in found) \
        else "AssertionError"


JUDGE_SECONDS = 60
"""Time one judge may take: a judge reads a bounded report, so only a forged one could take longer."""


class JudgeTimeout(Exception):
    pass


@contextlib.contextmanager
def time_budget(seconds: float):
    """Raise :class:`JudgeTimeout` in the block past ``seconds`` (main thread only: SIGALRM; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise JudgeTimeout(f"judging took more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _not_implemented(observed: dict, stopped) -> str | None:
    """The first label whose call raised NotImplementedError ("the checks" when the probe itself did)."""
    if isinstance(stopped, dict) and stopped.get("error") == "NotImplementedError":
        return "the checks"
    return next((label for label, found in observed.items() if isinstance(found, dict)
                 and found.get("type") == "error" and found.get("error") == "NotImplementedError"), None)


def _default_judge(check: Check) -> None:
    check.same_all()


def judge(test: HiddenTest, report, expected: dict | None, grade_id: str, partial: bool = False,
          measurement: dict | None = None) -> Verdict:
    """The verdict on one test cell from the kernel's report (None: no report came back). The report's
    ``nonce`` is the grader's (the executor writes it over anything the kernel sent)."""
    nonce = report.get("nonce", 0) if isinstance(report, dict) and type(report.get("nonce", 0)) is int else 0
    title = test.title
    if test.measured_by is None and not isinstance(report, dict):
        return Verdict(0.0, [f"{title}: the graded checks sent no result ({report or 'none arrived'})"])
    observed = (report or {}).get("observations") or {}
    check = Check(grade_id, observed if isinstance(observed, dict) else {}, expected or {},
                  getattr(test.module, "HINTS", {}), measurement, nonce)
    stopped = (report or {}).get("error")
    try:
        with time_budget(JUDGE_SECONDS):
            (getattr(test.module, "judge", None) or _default_judge)(check)
    except JudgeTimeout as late:
        check.failures.append(f"the result could not be judged ({late})")
    except Unusable as missing:
        check.failures.append(str(missing))
    except Exception as error:  # noqa: BLE001 - a judge that cannot read a result fails the check, never the batch
        check.failures.append(f"the result could not be judged ({type(error).__name__})")
    total = check.passed + len(check.failures)
    if isinstance(stopped, dict) and (check.failures or not check.passed):
        # the reason first; lines about labels never reached (or, with nothing observed, any line) add nothing
        reached = [line for line in check.failures if not line.endswith(NOT_REACHED)] if check.observed else []
        check.failures = [f"the checks stopped early: {describe(stopped)}"] + reached
    if len(check.failures) > 1 and len(check.errors) == len(check.failures) and len(set(check.errors)) == 1:
        check.failures = [f"every check {check.errors[0]}"]
    unwritten = _not_implemented(check.observed, stopped) if check.failures else None
    if unwritten:  # a blank TODO: one line that says so, not what each check would have compared
        check.failures = [f"not written yet: {unwritten} raised NotImplementedError (replace the "
                          "`raise NotImplementedError()` of the function it calls with your code)"]
    failures = [f"{title}, {line}" for line in check.failures]
    if not failures:
        return Verdict(1.0, [], check.notes)
    return Verdict(check.passed / total if partial and total else 0.0, failures, check.notes, _cause(report))


def judge_in_process(assignment: str, name: str, namespace: dict, observe_probe,
                     grade_id: str | None = None, task_runner=None) -> Verdict:
    """Plain ``nbgrader autograde``: probe (``observe_probe`` of ``autograder.kernel.probe``) and judge
    in the notebook's own process (not safe against a hostile notebook; it never passes what the
    kit's grader would fail)."""
    from autograder.manifest import REPO_ROOT

    folder = REPO_ROOT / "solutions" / assignment / "tests"
    tests = load(folder)
    if name not in tests:
        raise AssertionError(f"hidden test {name} not found in {folder}: grade with python -m autograder autograde")
    test = tests[name]
    nonce = 0 if test.measured_by is not None else secrets.randbits(31)
    if test.measured_by is not None:
        report, measurement = None, measure_in_process(test)
    else:
        report, measurement = observe_probe(name, test.kernel_source, namespace, nonce), None
        report["nonce"] = nonce
        if test.task_functions and task_runner is not None:
            observe_task(test, report, task_runner(namespace))  # kernel.probe.InProcess: the task's calls, in process
        if test.evaluated_with is not None:
            measurement = test.module.measure_here(decoded(report))
    expected = read_expected(folder).get("tests", {}).get(name)
    return judge(test, report, expected, grade_id or name, measurement=measurement)


def measure_in_process(test: HiddenTest) -> dict:
    """A measured test's own fallback measurement (plain nbgrader: no grader-side evaluator ran)."""
    return test.module.measure_here()
