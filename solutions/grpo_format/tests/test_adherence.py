"""Part 3, the three adherence tiers: held-out format adherence of the submitted adapter, measured by the grader.

No probe runs in the kernel. The kit's grader measures ``artifacts/grpo_format_adapter`` with its evaluator
(``autograder/evaluators/grpo_format.py``) outside the kernel and hands the measurement to :func:`judge`. The tier
points themselves are set by ``autograder.evaluators.apply_tiers``; both call the one rule, ``tier_verdict``.
:func:`measure_here` serves plain ``nbgrader autograde`` only (no grader, no sandbox): it measures the adapter in
the notebook's process with a private copy of the evaluator."""
import importlib.util
import json
from pathlib import Path

TODO = "Part 3 (adherence tier)"
POINTS = {"test_adherence_50": 2, "test_adherence_70": 2, "test_adherence_90": 2}
MEASURED_BY = "grpo_format"
ADAPTER = Path("artifacts") / "grpo_format_adapter"


def judge(check):
    measured = check.measurement
    if not isinstance(measured, dict):
        check.expect(False, "held-out format adherence was not measured: this cell is scored from the grader's "
                            "measurement of artifacts/grpo_format_adapter (python -m autograder autograde)")
        return
    threshold = (measured.get("thresholds") or {}).get(check.grade_id)
    profile = measured.get("profile") or "?"
    if threshold is None:
        check.expect(False, f"no adherence tier {check.grade_id} in the {profile} profile (tell the course staff)")
        return
    passed, why = _private_copy("__init__.py").tier_verdict(measured, float(threshold), profile)
    if measured.get("rate") is not None and not measured.get("error"):
        check.notes.append(f"held-out format adherence: {measured['rate']:.0%} ({measured.get('hits')}/"
                           f"{measured.get('total')} held-out prompts); this tier needs {float(threshold):.0%} in the "
                           f"{profile} profile")
        why += ": train longer or check the reward, then save the adapter again"
    check.expect(passed, why)


def _private_copy(name: str):
    """A module of the grader's ``autograder/evaluators`` loaded from its file: under plain nbgrader the notebook's
    process could patch the imported one. None when the grader is not installed here."""
    import autograder

    source = Path(autograder.__file__).resolve().parent / "evaluators" / name
    if not source.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"_private_evaluators_{Path(name).stem}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def started_profile() -> str:
    """The profile the kernel was started in (a cell that changes the environment later does not change it)."""
    try:
        started = Path("/proc/self/environ").read_bytes().split(b"\0")
        requested = dict(item.split(b"=", 1) for item in started if b"=" in item).get(b"COURSE_PROFILE", b"")
        requested = requested.decode().strip().lower()
    except OSError:                                                      # no /proc (not Linux): decide as "auto" does
        requested = "auto"
    if requested in ("tiny", "full"):
        return requested
    import torch

    return "full" if torch.cuda.is_available() else "tiny"


def measure_here() -> dict:
    """The measurement under plain nbgrader: the evaluator loaded from its file (a patch of the imported module does
    not reach this copy), in the started profile, with the thresholds of helpers/data/grading.json."""
    import helpers

    profile = started_profile()
    try:
        evaluator = _private_copy("grpo_format.py")
        if evaluator is None:
            return {"rate": None, "error": "the grader's evaluator (autograder/evaluators/grpo_format.py) is not "
                                           "installed here", "profile": profile, "thresholds": {}}
        measured = dict(evaluator.Evaluator(profile).measure(ADAPTER))
    except Exception as error:  # noqa: BLE001 - no base model here, say: the tiers cannot be measured
        measured = {"rate": None, "error": f"the evaluator did not start ({type(error).__name__}: {error})"[:300],
                    "profile": profile}
    grading = Path(helpers.__file__).resolve().parent / "data" / "grading.json"
    tiers = json.loads(grading.read_text(encoding="utf-8"))["grpo_format"]["tiers"]
    measured["thresholds"] = dict(tiers.get(measured.get("profile") or profile, {}))
    return measured
