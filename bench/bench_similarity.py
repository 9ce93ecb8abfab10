"""Seconds for the similarity report of a large batch (issue 31's goal: 300 maxent_irl submissions in under
2 minutes on 2 cores).

    .venv/bin/python bench/bench_similarity.py [--students 300]

Builds N submissions from the reference and its allowed variants (a random mix per student, local names
renamed at random, so no two are byte-identical), times ``autograder.reports.similarity.report`` and
prints the seconds and the pairs compared. Timings only: nothing is asserted.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nbformat  # noqa: E402

from autograder.authoring.course import fill_release  # noqa: E402
from autograder.manifest import REPO_ROOT, load_assignments  # noqa: E402
from autograder.reports.similarity import report  # noqa: E402

NAMES = ("totals", "visited", "n_trajectories", "counts", "policy", "p_next", "omega", "grad")


def build(out: Path, students: int, seed: int = 0) -> None:
    assignment = load_assignments(REPO_ROOT, ["maxent_irl"])[0]
    release = REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
    (out / "release" / "maxent_irl").mkdir(parents=True)
    (out / "release" / "maxent_irl" / "maxent_irl.ipynb").write_bytes(release.read_bytes())
    allowed = {}
    for variant in assignment.variants:
        if variant.kind == "allowed":
            cells = {p.grade_id for p in variant.patches} | set(variant.replace)
            allowed.setdefault(tuple(sorted(cells)), []).append(variant)
    rng = random.Random(seed)
    for i in range(students):
        chosen = [rng.choice(options) for options in allowed.values() if rng.random() < 0.5]
        target = out / "submitted" / f"student{i:03d}" / "maxent_irl" / "maxent_irl.ipynb"
        target.parent.mkdir(parents=True)
        fill_release(release, assignment.source, target, patches=[p.__dict__ for v in chosen for p in v.patches],
                     replace={c: s for v in chosen for c, s in v.replace.items()})
        notebook = nbformat.read(target, as_version=4)
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
                for name in NAMES:
                    if rng.random() < 0.5:
                        cell.source = re.sub(rf"\b{name}\b", f"{name}_{i}", cell.source)
        nbformat.write(notebook, target)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        build(out, args.students)
        started = time.perf_counter()
        report(out, "maxent_irl", reference=REPO_ROOT / "solutions" / "maxent_irl" / "maxent_irl.ipynb")
        seconds = time.perf_counter() - started
    pairs = (args.students + 1) * args.students // 2
    print(f"similarity report of {args.students} maxent_irl submissions (+ the reference): {seconds:.1f} s, "
          f"{pairs:,} pairs ({seconds / pairs * 1e3:.2f} ms a pair)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
