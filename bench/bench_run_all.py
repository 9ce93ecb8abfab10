"""Run All of each solution notebook in the tiny profile, as a student's laptop would: seconds per
notebook and its slowest cells.

    python bench/bench_run_all.py [maxent_irl tiny_grpo ...] [--threads N] [--json results.json]

Each notebook runs alone, in a temporary copy of its folder (its artifacts land there), in one
kernel with the library's default CPU threads (``--threads`` sets OMP/MKL threads instead; the demo
runs two references at a time with one thread each). Cell times are nbclient's own timestamps.
Prints the numbers; asserts nothing about time (issue 21's goal: each notebook within 120 s on
2 cores).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("maxent_irl", "grpo_format", "tiny_grpo", "math_grpo")
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}


def cell_seconds(cell) -> float:
    """Seconds from execute_input to execute_reply (0 for a cell that did not run)."""
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except KeyError:
        return 0.0
    return (end - start).total_seconds()


def run_all(assignment: str, threads: int | None, keep: Path | None = None) -> tuple[float, list[tuple[str, float]]]:
    import nbformat
    from nbclient import NotebookClient

    env = {**os.environ, **TINY_ENV}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    with tempfile.TemporaryDirectory(prefix=f"run-all-{assignment}-") as scratch:
        folder = Path(scratch) / assignment
        shutil.copytree(ROOT / "solutions" / assignment, folder)
        notebook = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
        started = time.perf_counter()
        NotebookClient(notebook, timeout=1800, kernel_name="python3",
                       resources={"metadata": {"path": str(folder)}}).execute(env=env)
        seconds = time.perf_counter() - started
        if keep is not None:  # the executed notebook, to read its printed numbers
            keep.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, keep / f"{assignment}.ipynb")
    cells = [(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", f"cell {i}"), cell_seconds(cell))
             for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    return seconds, sorted(cells, key=lambda pair: -pair[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help=f"some of {', '.join(NOTEBOOKS)} (default: all)")
    parser.add_argument("--threads", type=int, default=None, help="OMP/MKL threads per kernel (default: library's)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--keep", type=Path, help="save each executed notebook in this folder")
    args = parser.parse_args()
    unknown = sorted(set(args.assignments) - set(NOTEBOOKS))
    if unknown:
        parser.error(f"unknown notebook(s) {', '.join(unknown)}; choose from {', '.join(NOTEBOOKS)}")
    args.assignments = args.assignments or list(NOTEBOOKS)
    print(f"{os.cpu_count()} CPU cores, threads per kernel: {args.threads or 'library default'}")
    found = {}
    for assignment in args.assignments:
        seconds, cells = run_all(assignment, args.threads, args.keep)
        found[assignment] = {"seconds": round(seconds, 1), "slowest_cells": [[g, round(s, 1)] for g, s in cells[:10]]}
        slow = ", ".join(f"{g} {s:.0f} s" for g, s in cells[:10] if s >= 0.5)
        print(f"{assignment:12s} Run All {seconds:6.1f} s   slowest cells: {slow}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
