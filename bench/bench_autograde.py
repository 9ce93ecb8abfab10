"""Wall time to autograde N copies of the maxent_irl reference submission with 1 and 2 workers.

    .venv/bin/python bench/bench_autograde.py [--copies 16] [--workers 1 2] [--assignment maxent_irl]

Prints one line per worker count, the speed-up ratio, and whether every run gave identical
results (score, status, per-cell scores, feedback). Timings only: nothing is asserted on time.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.assignments import REPO_ROOT, load_assignments  # noqa: E402
from autograder.course import fill_release, new_course  # noqa: E402
from autograder.grading import autograde  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=16)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--assignment", default="maxent_irl")
    args = parser.parse_args()
    assignments = load_assignments(REPO_ROOT, [args.assignment])
    assignment = assignments[0]
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        scratch = Path(scratch)
        course = new_course(assignments, where=scratch)
        release_dir = course / "release" / assignment.id
        subs = scratch / "subs"
        first = subs / "student00" / assignment.id
        shutil.copytree(release_dir, first)
        fill_release(release_dir / f"{assignment.id}.ipynb", assignment.source, first / f"{assignment.id}.ipynb")
        for i in range(1, args.copies):
            shutil.copytree(first, subs / f"student{i:02d}" / assignment.id)
        print(f"{args.copies} copies of the {assignment.id} reference submission, {os.cpu_count()} CPU cores "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        timings, keys = {}, {}
        for workers in args.workers:
            started = time.perf_counter()
            results = autograde(subs, scratch / f"out{workers}", assignments, workers=workers, profile="tiny")
            timings[workers] = time.perf_counter() - started
            keys[workers] = [(r.student, r.score, r.status, r.cells, r.feedback) for r in results]
            scores = sorted({f"{r.score:g}/{r.max_score:g} {r.status}" for r in results})
            print(f"workers={workers}: {timings[workers]:.1f} s wall  ({timings[workers] / args.copies:.1f} s per "
                  f"submission; results: {', '.join(scores)})", flush=True)
        base = args.workers[0]
        for workers in args.workers[1:]:
            print(f"ratio workers={base} / workers={workers}: {timings[base] / timings[workers]:.2f}x")
        identical = all(keys[w] == keys[base] for w in args.workers)
        print(f"identical results across worker counts: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
