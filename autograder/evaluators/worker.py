"""A long-lived evaluator process: ``python -c ... worker.main [LIMIT OPTIONS] NAME PROFILE``.

Started (sandboxed) by ``evaluators.Pool``. Prints one JSON line when its model is loaded, then
answers each request line ``{"adapter": "<folder>", "rules": ..., "inputs": {...}}`` (inputs: what
that evaluator measures with, e.g. the prompts of a student's task) with one JSON line (the measurement, or
``{"error": ...}``), and each ``{"adapters": [...], "rules": ...}`` with ``{"answers": [one per adapter]}``.
Library output goes to stderr; stdout carries only these lines.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from autograder.kernel.start_kernel import apply_limits, split_limits

    limits, argv = split_limits(argv)  # the launcher's, from the spec: as a kernel's
    name, profile = argv[0], argv[1]
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints from libraries go to the log
    sys.stdout = sys.stderr
    apply_limits(limits)
    from autograder.evaluators import REGISTRY

    try:
        evaluator = importlib.import_module(REGISTRY[name]).Evaluator(profile)
    except Exception as error:  # noqa: BLE001 - reported to the grader, which says so per submission
        replies.write(json.dumps({"error": f"{type(error).__name__}: {error}"[:500]}) + "\n")
        return 1
    replies.write(json.dumps({"ready": True, **evaluator.describe()}) + "\n")
    for line in sys.stdin:
        try:
            request = json.loads(line)
            rules = request.get("rules")
            if rules:
                from autograder.manifest import AdapterRules

                rules = AdapterRules(**{**rules, "target_modules": tuple(rules["target_modules"])})
            if "adapters" in request:  # a group, decoded together where the evaluator can
                adapters = [Path(a) for a in request["adapters"]]
                grouped = getattr(evaluator, "measure_many", None)
                answer = {"answers": grouped(adapters, rules) if grouped else
                          [evaluator.measure(adapter, rules) for adapter in adapters]}
            else:
                answer = evaluator.measure(Path(request["adapter"]), rules, **(request.get("inputs") or {}))
        except Exception as error:  # noqa: BLE001 - one bad adapter costs its own measurement only
            answer = {**evaluator.describe(), "rate": None, "error": f"{type(error).__name__}: {error}"[:500]}
        replies.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
