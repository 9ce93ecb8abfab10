"""Seconds to autograde copies of reference submissions, per assignment and per worker count.

    .venv/bin/python bench/bench_autograde.py [--assignment maxent_irl] [--copies 16] [--workers 1 2]
    .venv/bin/python bench/bench_autograde.py --each [--copies 3] [--profile tiny|full]

The first form grades N copies of one reference with plain ``nbgrader autograde`` (no sandbox,
no guard, no feedback pages: the cost floor) and then with ``python -m autograder autograde``
with 1 and 2 workers, checks that every run of ours gave identical results, and prints the
ratio of ours (1 worker) to plain nbgrader per submission and the speed-up of 2 workers. Ours
writes each student's feedback page as it grades, so the ratio's plain side is ``nbgrader
autograde`` followed by ``nbgrader generate_feedback`` (the ratio to autograde alone is printed too).
``--each`` builds the reference of every assignment (running it where
it must produce artifacts, e.g. grpo_format's adapter), grades N copies with one worker and prints
seconds per submission (the first one pays for starting the evaluator and loading its base
model; the rest show the steady state) and, for grpo_format, the grader-side measurement time.
Copies share their adapter's bytes, so grpo_format's copies reuse one measurement: the
evaluator's own cost per distinct adapter, alone and in groups, is ``bench_evaluator_groups.py``'s.
``--profile full`` needs a GPU for grpo_format and math_grpo. Timings only: nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.authoring.course import fill_release, new_course  # noqa: E402
from autograder.grading.batch import Request, autograde  # noqa: E402
from autograder.manifest import REPO_ROOT, load_assignments  # noqa: E402


def reference_copies(assignment, scratch: Path, copies: int, profile: str) -> Path:
    return reference_course(assignment, scratch, copies, profile)[1]


def reference_course(assignment, scratch: Path, copies: int, profile: str) -> tuple[Path, Path]:
    """An nbgrader course for ``assignment`` and a folder of ``copies`` reference submissions."""
    course = new_course([assignment], where=scratch)
    subs = scratch / "subs"
    first = subs / "student00" / assignment.id
    if assignment.artifacts:
        from autograder.demo import build_samples

        env = {"COURSE_PROFILE": profile, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
        built = scratch / "built"
        build_samples([assignment], course, built, env, log=lambda line: print(line, flush=True))
        shutil.copytree(built / "reference" / assignment.id, first)
    else:
        release_dir = course / "release" / assignment.id
        shutil.copytree(release_dir, first)
        fill_release(release_dir / f"{assignment.id}.ipynb", assignment.source, first / f"{assignment.id}.ipynb")
    for i in range(1, copies):
        shutil.copytree(first, subs / f"student{i:02d}" / assignment.id)
    return course, subs


def each(args) -> int:
    ids = args.only or ["maxent_irl", "grpo_format", "tiny_grpo", "math_grpo"]
    print(f"{os.cpu_count()} CPU cores (load average {os.getloadavg()[0]:.1f}), profile {args.profile}, "
          f"{args.copies} copies each, 1 worker", flush=True)
    for assignment in load_assignments(REPO_ROOT, ids):
        with tempfile.TemporaryDirectory(prefix=f"bench-{assignment.id}-") as scratch:
            subs = reference_copies(assignment, Path(scratch), args.copies, args.profile)
            started = time.perf_counter()
            results = autograde(subs, Path(scratch) / "out", [assignment], Request(workers=1, profile=args.profile))
            wall = time.perf_counter() - started
        per = [r.seconds for r in results]
        scores = sorted({f"{r.score:g}/{r.max_score:g} {r.status}" for r in results})
        line = (f"{assignment.id:12s} {wall / len(results):6.1f} s per submission (batch {wall:.0f} s); first "
                f"{per[0]:.1f} s, then median {statistics.median(per[1:] or per):.1f} s; {', '.join(scores)}")
        measured = [r.measurements.get("grpo_format", {}).get("seconds") for r in results if r.measurements]
        if any(m is not None for m in measured):
            line += f"; evaluator {', '.join(f'{m:.1f}' for m in measured if m is not None)} s"
        print(line, flush=True)
    return 0


def plain_nbgrader(course: Path, subs: Path, assignment) -> tuple[float, float, set]:
    """Seconds for plain ``nbgrader autograde`` of every submission in ``subs``, then for
    ``nbgrader generate_feedback``, and the scores."""
    import subprocess

    from nbgrader.api import Gradebook

    for student in sorted(subs.iterdir()):
        shutil.copytree(student / assignment.id, course / "submitted" / student.name / assignment.id)
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment.id, "--force"], cwd=course,
                          env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"plain nbgrader autograde failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {f"{s.score:g}/{s.max_score:g}" for s in gradebook.assignment_submissions(assignment.id)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", assignment.id, "--force"],
                          cwd=course, env=env, capture_output=True, text=True)
    feedback = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"plain nbgrader generate_feedback failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, feedback, scores


def stages(results) -> str:
    """Mean seconds per grading stage (Result.timings), largest first."""
    names = sorted({k for r in results for k in r.timings})
    means = {k: statistics.mean(r.timings.get(k, 0.0) for r in results) for k in names}
    return ", ".join(f"{k} {v:.2f}" for k, v in sorted(means.items(), key=lambda kv: -kv[1]))


def workers_ratio(args) -> int:
    assignments = load_assignments(REPO_ROOT, [args.assignment])
    assignment = assignments[0]
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        scratch = Path(scratch)
        course, subs = reference_course(assignment, scratch, args.copies, args.profile)
        print(f"{args.copies} copies of the {assignment.id} reference submission, {os.cpu_count()} CPU cores "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        plain, plain_feedback, plain_scores = plain_nbgrader(course, subs, assignment)
        print(f"plain nbgrader autograde: {plain:.1f} s wall ({plain / args.copies:.1f} s per submission; "
              f"scores {', '.join(sorted(plain_scores))}); then generate_feedback (the students' pages, which "
              f"ours also writes): {plain_feedback:.1f} s wall ({plain_feedback / args.copies:.1f} s per submission)",
              flush=True)
        timings, keys = {}, {}
        for workers in args.workers:
            started = time.perf_counter()
            request = Request(workers=workers, profile=args.profile)
            results = autograde(subs, scratch / f"out{workers}", assignments, request)
            timings[workers] = time.perf_counter() - started
            keys[workers] = [(r.student, r.score, r.status, r.cells) for r in results]
            scores = sorted({f"{r.score:g}/{r.max_score:g} {r.status}" for r in results})
            print(f"workers={workers}: {timings[workers]:.1f} s wall  ({timings[workers] / args.copies:.1f} s per "
                  f"submission; results: {', '.join(scores)})", flush=True)
            print(f"  where one submission's time goes (mean s): {stages(results)}", flush=True)
        base = args.workers[0]
        print(f"ratio ours (workers={base}) / plain nbgrader autograde + generate_feedback: "
              f"{timings[base] / (plain + plain_feedback):.2f}x per submission "
              f"(/ autograde alone, no feedback pages: {timings[base] / plain:.2f}x)")
        for workers in args.workers[1:]:
            print(f"speed-up of workers={workers} over workers={base}: {timings[base] / timings[workers]:.2f}x")
        identical = all(keys[w] == keys[base] for w in args.workers)
        print(f"identical results across worker counts: {identical}")
    return 0 if identical else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--assignment", default="maxent_irl")
    parser.add_argument("--profile", default="tiny", choices=["tiny", "full"])
    parser.add_argument("--each", action="store_true", help="seconds per submission for every assignment")
    parser.add_argument("--only", nargs="+", help="with --each: these assignments only")
    args = parser.parse_args()
    if args.each:
        args.copies = args.copies or 3
        return each(args)
    args.copies = args.copies or 16
    return workers_ratio(args)


if __name__ == "__main__":
    sys.exit(main())
