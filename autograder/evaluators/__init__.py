"""Grader-side measurements of a submission's artifacts, made outside the student's kernel.

An assignment declares one in its manifest (``evaluator``: name, artifact, tiers per profile,
time and memory limits). Before the kernel starts, :class:`~autograder.evaluators.pool.Pool` hands
the submission's artifact to a long-lived evaluator process (``worker.py``, one per grading
worker and GPU, sandboxed like a kernel: no network, no view of other submissions or the course
source). It loads the base model once, checks each adapter against the manifest's rules
(``adapters``), measures it, and proves the base unchanged before the next one (``shared_base``).
Evaluators in ``GROUP_SIZES`` also measure several adapters in one decode; a batch uses that
before grading starts (``autograder.grading.measure_ahead``). A hidden test that needs the notebook's
own inputs (``EVALUATE_WITH``: tiny_grpo measures the adapter on the student's prompts) asks the same
pool while its job runs (``autograder.grading.measure_on_request``): the pool alone starts evaluators.
The grader then sets each tier cell's score itself (:func:`apply_tiers`: full points when
``rate >= threshold``, else 0), whatever the kernel did in that cell, writes one feedback line
with the measured rate, and puts the measurement into the tier cells' source just before they run
(see ``autograder.grading.executor``) so they can print it.

The per-evaluator contract (what is measured, the fields) is at the top of its module
(``grpo_format.py``) and in docs/GRADING.md.
"""
from __future__ import annotations

REGISTRY = {"grpo_format": "autograder.evaluators.grpo_format",
            "greedy_answers": "autograder.evaluators.greedy_answers"}
GROUP_SIZES = {"grpo_format": 8}
"""Evaluators that decode several submissions' adapters together (``measure_many``), and how many
at once; see ``autograder.grading.measure_ahead``. Eight students' rows fill a GPU's batch."""


def declared(assignment, profile: str = "tiny") -> dict | None:
    """The assignment's evaluator with the tier thresholds of ``profile`` (the manifest has both)."""
    spec = assignment.evaluator
    if spec is None:
        return None
    if spec.name not in REGISTRY:
        raise ValueError(f"{assignment.manifest}: evaluator.name: unknown evaluator {spec.name!r} "
                         f"(known: {', '.join(REGISTRY)})")
    tiers = dict(spec.tiers[profile])
    return {"name": spec.name, "artifact": spec.artifact, "tiers": tiers, "profile": profile,
            "timeout": spec.timeout_s, "memory_mb": spec.memory_mb, "adapters": assignment.adapters}


def tier_verdict(measured: dict, threshold: float, profile: str) -> tuple[bool, str]:
    """The one tier rule, for the grader (:func:`apply_tiers`) and the tier cells' judge alike: a tier is
    earned when the measured rate reaches its threshold; otherwise the reason, in one line."""
    rate, error = measured.get("rate"), measured.get("error")
    if rate is None or error:
        return False, f"held-out format adherence could not be measured ({error or 'no rate'})"
    if rate + 1e-12 >= threshold:
        return True, ""
    return False, f"held-out format adherence {rate:.0%} is below the {threshold:.0%} tier ({profile} profile)"


def apply_tiers(result, spec: dict, record: dict | None) -> set:
    """Set the tier cells' scores from the grader's measurement; returns their grade ids."""
    measured = (result.measurements or {}).get(spec["name"], {})
    rate = measured.get("rate")
    error = measured.get("error")
    tiers = {gid: float(t) for gid, t in spec["tiers"].items() if gid in result.cells}
    profile = spec.get("profile") or measured.get("profile") or "?"
    thresholds = " / ".join(f"{t:.0%}" for t in sorted(tiers.values()))
    shown = []
    for gid, threshold in sorted(tiers.items(), key=lambda item: item[1]):
        points = result.cells[gid][1]
        passed, why = tier_verdict(measured, threshold, profile)
        result.cells[gid][0] = points if passed else 0.0
        result.cell_messages.pop(gid, None)
        if not passed:
            result.cell_messages[gid] = why
        shown.append(f"{threshold:.0%}: {result.cells[gid][0]:g}/{points:g}")
        if record is not None:
            grade = record.setdefault("grades", {}).setdefault(f"{result.assignment}/{gid}", {})
            grade["auto_score"] = result.cells[gid][0]
            grade["needs_manual_grade"] = False
    if tiers:
        if rate is not None and not error:
            result.feedback.append(
                f"held-out format adherence measured by the grader: {rate:.0%} ({measured.get('hits')}/"
                f"{measured.get('total')} held-out prompts, greedy decoding); tiers of the {profile} profile "
                f"(thresholds {thresholds}): {', '.join(shown)}")
        else:
            result.feedback.append(f"held-out format adherence could not be measured: {error}; the adherence "
                                   f"tiers of the {profile} profile (thresholds {thresholds}) score 0 "
                                   f"({', '.join(shown)})")
    return set(tiers)


