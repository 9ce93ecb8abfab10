"""The full profile on a real GPU, offline, in one command.

    python tools/gpu/smoke.py [--out gpu-smoke] [--assignment ID ...] [--max-steps 2] [--max-eval 16]

What it does, on any CUDA machine with torch and transformers (other packages can be carried as
wheels: see tools/gpu/README.md):

1. writes random-weight stand-ins with the real configurations of the hub models into a fresh
   offline hub cache (``tools/gpu/standins.py``), and a local MATH folder from the shipped
   fixtures (``COURSE_MATH_SOURCE``);
2. runs every solution notebook top to bottom, as a student's filled-in copy, in the ``full``
   profile with step counts and evaluation sizes capped (``COURSE_MAX_STEPS``,
   ``COURSE_MAX_EVAL``), recording every cell that raised and how long each notebook took;
3. grades those reference submissions with ``python -m autograder autograde --profile full``
   (``--copies N`` grades N identical copies of each, one after another: the first pays for
   starting the grader's evaluator, the rest give the steady seconds per submission, and a copy
   graded unlike the reference fails the run);
4. prints one table: per assignment, run time, failing cells, graded score, and the cells that
   are expected to fail because they need real weights (``needs_real_weights`` in
   ``solutions/<id>/manifest.json``: adherence tiers, improvement checks). It exits 1 when any
   other cell fails.

``--cpu-dry-run`` runs the same plumbing on a CPU with stand-ins shrunk to a tenth (for testing
this tool; GPU assignments then grade as ``no-gpu``).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _cells_with_errors(notebook) -> list[tuple[str, str]]:
    failed = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "error":
                name = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {index}"
                failed.append((name, f"{output.get('ename')}: {str(output.get('evalue', ''))[:160]}"))
    return failed


def run_reference(assignment, folder: Path, env: dict, timeout: int) -> tuple[float, list[tuple[str, str]]]:
    """Execute the filled-in release in ``folder`` (artifacts land beside it); errors are recorded,
    not raised, so one failing cell does not hide the rest."""
    import nbformat
    from nbclient import NotebookClient

    from autograder.authoring.course import fill_release

    release = REPO / "notebooks" / assignment.id / f"{assignment.id}.ipynb"
    shutil.copytree(release.parent, folder, dirs_exist_ok=True)
    path = folder / f"{assignment.id}.ipynb"
    fill_release(release, assignment.source, path)
    notebook = nbformat.read(path, as_version=4)
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    started = time.perf_counter()
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    seconds = time.perf_counter() - started
    nbformat.write(notebook, path)
    return seconds, _cells_with_errors(notebook)


def grade(submissions: Path, out: Path, env: dict, ids: list[str]) -> dict:
    """``python -m autograder autograde --profile full``; returns {assignment: [rows of grades.csv]},
    the reference's row first."""
    command = [sys.executable, "-m", "autograder", "autograde", str(submissions), "--out", str(out),
               "--profile", "full"] + [arg for i in ids for arg in ("--assignment", i)]
    with open(out.parent / "autograde.log", "w") as log:  # written as it runs: a lease that ends mid-batch keeps it
        subprocess.run(command, cwd=REPO, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT)
    rows = {}
    grades = out / "grades.csv"
    if grades.exists():
        with open(grades, newline="") as handle:
            for row in sorted(csv.DictReader(handle), key=lambda r: r["student"] != "reference"):
                rows.setdefault(row["assignment"], []).append(row)
    return rows


def add_copies(folder: Path, copies: int) -> None:
    """``copies - 1`` more students (reference2, reference3, ...: graded after ``reference``, since
    submissions are graded in name order) who submitted exactly the reference in ``folder``."""
    for i in range(2, copies + 1):
        shutil.copytree(folder, folder.parent.parent / f"reference{i}" / folder.name)


def prepare_hub(hub: Path, scale: float) -> tuple[Path, Path]:
    """Stand-ins in ``hub/hf`` and the MATH folder in ``hub/math``, written once: several smoke
    runs (one per assignment, in parallel on one GPU) share them through ``--hub``."""
    from helpers import math_tasks as course_math
    from tools.gpu import standins

    hf_home, math_dir, ready = hub / "hf", hub / "math", hub / ".ready"
    if ready.exists():
        return hf_home, math_dir
    for repo in standins.MODELS:
        standins.write_standin(repo, hf_home, scale=scale)
    math_dir.mkdir(parents=True, exist_ok=True)
    for split, name in (("train", "train"), ("validation", "test")):
        rows = course_math.load_math(split, "tiny")
        (math_dir / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ready.write_text("stand-ins and MATH folder written\n")
    return hf_home, math_dir


def _copy_seconds(entry: dict) -> str:
    """", then 14.2, 13.9 (copies: 30/30 ok)": the copies' grading seconds and scores, for the table."""
    copies = entry.get("copies") or []
    if not copies:
        return ""
    scores = sorted({f"{c['score']}/{c['max_score']} {c['status']}" for c in copies})
    return f", then {', '.join(str(c['seconds']) for c in copies)} (copies: {', '.join(scores)})"


def main(argv=None) -> int:
    from autograder.manifest import load_assignments

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="gpu-smoke", help="folder for the hub cache, runs, grades and report")
    parser.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    parser.add_argument("--max-steps", type=int, default=2, help="cap on every training loop's steps")
    parser.add_argument("--max-eval", type=int, default=16, help="cap on evaluation and baseline sizes")
    parser.add_argument("--timeout", type=int, default=1200, help="per-cell timeout while running a notebook (s)")
    parser.add_argument("--cpu-dry-run", action="store_true", help="no GPU: shrunken stand-ins, to test this tool")
    parser.add_argument("--skip-grading", action="store_true")
    parser.add_argument("--copies", type=int, default=1,
                        help="grade this many copies of each reference (seconds per submission, steady state)")
    parser.add_argument("--hub", help="folder for the stand-ins and MATH, written once and reused (default: OUT)")
    parser.add_argument("--prepare-only", action="store_true", help="write the stand-ins into --hub and stop")
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available() and not args.cpu_dry_run:
        print("error: no CUDA GPU visible to torch; run this on a GPU machine (or --cpu-dry-run to test the tool)",
              file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    started = time.perf_counter()
    hub = Path(args.hub).resolve() if args.hub else out
    hf_home, math_dir = prepare_hub(hub, scale=0.1 if args.cpu_dry_run else 1.0)
    print(f"stand-ins and MATH folder ready in {time.perf_counter() - started:.0f} s ({hub})", flush=True)
    if args.prepare_only:
        return 0

    env = {"COURSE_PROFILE": "full", "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "COURSE_MATH_SOURCE": str(math_dir), "COURSE_MAX_STEPS": str(args.max_steps),
           "COURSE_MAX_EVAL": str(args.max_eval), "MPLBACKEND": "Agg", "TOKENIZERS_PARALLELISM": "false"}
    assignments = load_assignments(REPO, args.assignment)
    submissions = out / "submissions"
    report = {}
    for assignment in assignments:
        folder = submissions / "reference" / assignment.id
        print(f"running {assignment.id} (full profile, at most {args.max_steps} steps) ...", flush=True)
        seconds, failed = run_reference(assignment, folder, env, args.timeout)
        expected = set(assignment.needs_real_weights)
        report[assignment.id] = {"run_seconds": round(seconds, 1), "failed_cells": failed,
                                 "unexpected": [name for name, _ in failed if name not in expected],
                                 "expected_to_fail": sorted(expected)}
        print(f"  {assignment.id}: {seconds:.0f} s, {len(failed)} failing cell(s)", flush=True)
        for cell, error in failed:  # now, not only in the final table: a run stopped later keeps them
            print(f"    {cell}: {error}", flush=True)
        (out / "smoke.json").write_text(json.dumps(report, indent=2))
        add_copies(folder, args.copies)
    if not args.skip_grading:
        rows = grade(submissions, out / "graded", env, [a.id for a in assignments])
        for assignment in assignments:
            graded = rows.get(assignment.id) or [{}]
            row = graded[0]
            entry = report[assignment.id]
            entry["graded"] = {k: row.get(k) for k in ("score", "max_score", "status", "seconds")}
            entry["copies"] = [{k: r.get(k) for k in ("student", "score", "max_score", "status", "seconds")}
                               for r in graded[1:]]
            # identical submissions, graded one after another: a different grade means one
            # submission's grading changed the next one's (the evaluator's state, say)
            entry["copies_differ"] = [f"{c['student']} graded {c['score']}/{c['max_score']} {c['status']}"
                                      for c in entry["copies"]
                                      if (c["score"], c["status"]) != (row.get("score"), row.get("status"))]
            cells = {name: row[name] for name in row if name.startswith("test_") and row[name] != ""}
            entry["graded_cells"] = cells
            expected = set(entry["expected_to_fail"])
            feedback = row.get("feedback", "")
            entry["grading_unexpected"] = [
                name for name, score in cells.items()
                if name not in expected and f"{name}:" in feedback]
    (out / "smoke.json").write_text(json.dumps(report, indent=2))
    lines = ["| assignment | run (s) | failing cells (unexpected) | graded | grading s | expected to fail |",
             "| --- | --- | --- | --- | --- | --- |"]
    bad = False
    for name, entry in report.items():
        graded = entry.get("graded") or {}
        unexpected = entry["unexpected"] + entry.get("grading_unexpected", []) + entry.get("copies_differ", [])
        bad |= bool(unexpected)
        lines.append(f"| {name} | {entry['run_seconds']} "
                     f"| {len(entry['failed_cells'])} ({', '.join(unexpected) or 'none'}) "
                     f"| {graded.get('score')}/{graded.get('max_score')} {graded.get('status')} "
                     f"| {graded.get('seconds')}{_copy_seconds(entry)} "
                     f"| {', '.join(entry['expected_to_fail']) or '-'} |")
    table = "\n".join(lines)
    (out / "smoke.md").write_text(table + "\n")
    print(table)
    for name, entry in report.items():
        for cell, error in entry["failed_cells"]:
            print(f"  {name} {cell}: {error}")
    print(f"\nreport: {out / 'smoke.json'}  ({time.perf_counter() - started:.0f} s in all)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
