"""Time and memory of every cell of one notebook run, printed as each cell ends.

    python tools/gpu/cell_profile.py NOTEBOOK [--cwd DIR] [--set NAME=VALUE ...] [--out cells.json]

Runs NOTEBOOK top to bottom in a fresh ``python3`` kernel whose working folder is ``--cwd``
(default: a copy of the notebook's folder in a temporary one, so artifacts land there), with
the current environment plus each ``--set``. After every cell it prints one line: index, the
cell's grade_id (or its first words), wall seconds, the kernel's peak resident memory during the
cell (the kernel and its children, sampled every 0.2 s), the GPU memory in use after it
(``nvidia-smi``, where there is one) and the error, if any. Errors are recorded and the run goes
on, so one failing cell does not hide the rest.

What it is for: a grading kernel on a GPU is killed when its resident memory passes the
assignment's ``memory_mb`` (``autograder.kernel.start_kernel``), and a run that stops at the
device's time limit says nothing about which cell was slow. Pass ``--set
NBGRADER_EXECUTION=autograde`` with ``--cwd`` holding a finished run's ``artifacts/`` to see
the cells as the grader runs them (training cells then load the artifacts).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _gpu_memory_mib() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "-"
    return f"{out.splitlines()[0]} MiB" if out else "-"


class PeakRSS:
    """Largest resident memory of a process and its children, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.2):
        import psutil

        self.process, self.every, self.peak = psutil.Process(pid), every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import psutil

        try:
            tree = [self.process, *self.process.children(recursive=True)]
            self.peak = max(self.peak, sum(p.memory_info().rss for p in tree))
        except psutil.Error:
            pass

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def take(self) -> int:
        """The peak since the last call (a cell shorter than one interval: its end), in MiB."""
        self._sample()
        peak, self.peak = self.peak, 0
        return peak // 2**20

    def stop(self) -> None:
        self._stop.set()


def _label(cell, index: int) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return grade_id or f"{cell.cell_type} {index}: {' '.join(cell.source.split())[:40]}"


def profile(notebook: Path, cwd: Path, env: dict, timeout: int) -> list[dict]:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=timeout, allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    rows = []
    with client.setup_kernel(env=env):  # passed on to the kernel manager's start_kernel
        watch = PeakRSS(client.km.provisioner.process.pid)
        try:
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                started = time.perf_counter()
                client.execute_cell(cell, index)
                seconds = time.perf_counter() - started
                errors = [f"{o.get('ename')}: {str(o.get('evalue', ''))[:120]}" for o in cell.get("outputs", [])
                          if o.get("output_type") == "error"]
                row = {"index": index, "cell": _label(cell, index), "seconds": round(seconds, 2),
                       "peak_rss_mib": watch.take(), "gpu_after": _gpu_memory_mib(),
                       "error": errors[0] if errors else ""}
                rows.append(row)
                print(f"{index:3d} {row['cell'][:48]:48s} {seconds:7.1f} s  rss {row['peak_rss_mib']:6d} MiB  "
                      f"gpu {row['gpu_after']:>10s}  {row['error']}", flush=True)
        finally:
            watch.stop()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--cwd", type=Path, help="the kernel's working folder (default: a copy of the notebook's)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="environment for the kernel")
    parser.add_argument("--timeout", type=int, default=1200, help="per-cell timeout (s)")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here too")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--set takes NAME=VALUE, got {item!r}")
        env[name] = value
    cwd = args.cwd
    if cwd is None:
        cwd = Path(tempfile.mkdtemp(prefix="cell-profile-")) / args.notebook.parent.name
        shutil.copytree(args.notebook.parent, cwd)
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows = profile(args.notebook.resolve(), cwd.resolve(), env, args.timeout)
    total = time.perf_counter() - started
    slowest = sorted(rows, key=lambda r: -r["seconds"])[:5]
    peak = max((r["peak_rss_mib"] for r in rows), default=0)
    slow = ", ".join(f"{r['cell']} {r['seconds']:.0f} s" for r in slowest)
    print(f"{args.notebook.name}: {total:.0f} s in all, peak rss {peak} MiB; slowest: {slow}  (working folder {cwd})")
    if args.out:
        args.out.write_text(json.dumps({"notebook": str(args.notebook), "seconds": round(total, 1), "cells": rows},
                                       indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
