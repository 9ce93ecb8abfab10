"""The grader's limits, each from the command line or the manifest, on a small course: what a
submission that runs into one scores, its status, and the line that says why.

- the whole-notebook time limit (manifest ``notebook_timeout_s``): the executor stops starting
  cells, or -- a cell that will not stop -- the job is killed at the hard limit; either way the
  points earned before are kept and the status is ``timeout``;
- ``--timeout`` (per cell) and ``--memory-mb`` override the manifest;
- ``--sandbox required`` stops the batch with one line where no isolation is possible.
"""
from __future__ import annotations

import csv
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.slow


def _meta(grade_id, **flags):
    return {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": not flags.get("solution"),
                         "schema_version": 3, "solution": False, "task": False, **flags}}


HIDDEN = ("### BEGIN HIDDEN TESTS\nfrom autograder.kernel.probe import hidden_test\n"
          "hidden_test('limits', '{test}')\n### END HIDDEN TESTS")
TEST_FILE = '''"""f returns 1."""
TODO = "f"
POINTS = 1


def probe(nb, observe):
    observe("f()", nb.f)
'''


def _course(root: Path, notebook_timeout: int) -> Path:
    from manifest_fixtures import write_manifest

    cells = [new_code_cell("import time", metadata=_meta("setup")),
             new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                           metadata=_meta("f", solution=True)),
             new_code_cell(HIDDEN.format(test="test_f"), metadata=_meta("test_f", grade=True, points=1)),
             new_code_cell("# slow work goes here\n### BEGIN SOLUTION\npass\n### END SOLUTION",
                           metadata=_meta("work", solution=True)),
             new_code_cell(HIDDEN.format(test="test_after"), metadata=_meta("test_after", grade=True, points=1))]
    folder = root / "solutions" / "limits"
    (folder / "tests").mkdir(parents=True)
    for test in ("test_f", "test_after"):
        (folder / "tests" / f"{test}.py").write_text(TEST_FILE)
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}),
                   folder / "limits.ipynb")
    write_manifest(folder, limits={"cell_timeout_s": 20, "notebook_timeout_s": notebook_timeout, "memory_mb": 3072})
    return root


def _submit(root: Path, subs: Path, student: str, work: str) -> None:
    from autograder.authoring import expected
    from autograder.authoring.course import fill_release, generate
    from autograder.manifest import load_assignments

    (assignment,) = load_assignments(root)
    release = root / "notebooks" / "limits" / "limits.ipynb"
    if not release.exists():
        generate([assignment], root / "notebooks")
        expected.write(assignment)
    folder = subs / student / "limits"
    fill_release(release, assignment.source, folder / "limits.ipynb", replace={"work": work})


def _grade(root: Path, subs: Path, out: Path, *options) -> tuple[subprocess.CompletedProcess, dict]:
    run = subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(root), "autograde", str(subs),
                          "--out", str(out), "--profile", "tiny", "--workers", "2", *options],
                         capture_output=True, text=True, timeout=600)
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))} if (out / "grades.csv").exists() else {}
    return run, rows


def test_the_whole_notebook_limit_keeps_earned_points(tmp_path):
    root = _course(tmp_path / "course", notebook_timeout=6)
    subs = tmp_path / "subs"
    # four cells of 3 s: the executor stops starting cells once the 6 s are gone
    _submit(root, subs, "slow_cells", "time.sleep(3)")
    notebook = subs / "slow_cells" / "limits" / "limits.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "work")
    for _ in range(3):
        nb.cells.insert(index + 1, new_code_cell("time.sleep(3)"))
    nbformat.write(nb, notebook)
    # a cell that ignores interrupts and outlives the hard limit (6 s + 10 s): the job is killed
    _submit(root, subs, "stuck", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(300)")
    _submit(root, subs, "quick", "pass")
    run, rows = _grade(root, subs, tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert (rows["quick"]["score"], rows["quick"]["status"]) == ("2", "ok")
    for student in ("slow_cells", "stuck"):
        row = rows[student]
        assert (row["score"], row["status"], row["test_f"]) == ("1", "timeout", "1"), row
        assert "6 s limit for the whole notebook" in row["feedback"], row["feedback"]


def test_timeout_and_memory_options_override_the_manifest(tmp_path):
    root = _course(tmp_path / "course", notebook_timeout=600)
    subs = tmp_path / "subs"
    _submit(root, subs, "sleeper", "time.sleep(30)")
    _submit(root, subs, "hog", "block = bytearray(3 * 2**30)")
    run, rows = _grade(root, subs, tmp_path / "out", "--timeout", "5", "--memory-mb", "1500")
    assert run.returncode == 0, run.stderr
    assert (rows["sleeper"]["score"], rows["sleeper"]["status"]) == ("1", "timeout")
    assert "5 s per-cell limit" in rows["sleeper"]["feedback"]
    assert (rows["hog"]["score"], rows["hog"]["status"]) == ("2", "out-of-memory")  # a student cell ran out
    assert "1500 MiB memory limit" in rows["hog"]["feedback"]


def test_sandbox_required_stops_where_there_is_none(tmp_path, monkeypatch):
    from autograder.__main__ import main
    from autograder.isolation import host_isolation as probe

    root = _course(tmp_path / "course", notebook_timeout=600)
    subs = tmp_path / "subs"
    _submit(root, subs, "anyone", "pass")
    monkeypatch.setattr(probe, "_probed", {None: probe.Isolation("none", "no namespaces on this host")})
    code = main(["--course-root", str(root), "autograde", str(subs), "--out", str(tmp_path / "out"),
                 "--profile", "tiny", "--sandbox", "required"])
    assert code == 2
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_the_memory_limit_counts_the_whole_process_tree(tmp_path):
    """Issue 31: with no delegated cgroup the limit was per process (RLIMIT_AS): a kernel and two forked
    children held 4,284 MB against 3,072. A kernel on a CPU grader now also gets the watchdog over its
    tree: three processes of 180 MB, each under a 400 MB limit, are stopped together."""
    import os

    env = dict(os.environ)
    tree = subprocess.Popen([sys.executable, "-c", (
        "import os, time\n"
        "from autograder.kernel.start_kernel import KernelLimits, apply_limits\n"
        f"apply_limits(KernelLimits(memory_mb=400, memory_mode='as', state_dir={str(tmp_path)!r}))\n"
        "for _ in range(2):\n"
        "    if os.fork() == 0:\n"
        "        break\n"
        "block = bytearray(180 * 2**20)\n"
        "time.sleep(60)\n")], env=env)
    started = time.monotonic()
    assert tree.wait(timeout=60) != 0 and time.monotonic() - started < 50
    assert "passed the 400 MiB limit" in (tmp_path / "memory").read_text()


def test_the_grading_jobs_own_memory_is_bounded():
    """Issue 40: the job's process (the judges) is killed past its budget; ``wait_bounded`` says why."""
    from autograder.isolation import processes

    greedy = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(400 * 2**20); x[::4096] = b'1' * "
                               "len(x[::4096]); time.sleep(60)"])
    code, over = processes.wait_bounded(greedy.pid, greedy.poll, timeout=30, memory_mb=200)
    greedy.wait()
    assert (code, over) == (None, "memory")
    quick = subprocess.Popen([sys.executable, "-c", "pass"])
    assert processes.wait_bounded(quick.pid, quick.poll, timeout=30, memory_mb=200) == (0, "")
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert processes.wait_bounded(slow.pid, slow.poll, timeout=0.5, memory_mb=0) == (None, "timeout")
    slow.wait()


def test_a_job_killed_for_the_graders_memory_scores_zero_with_a_line():
    from autograder.grading import status

    facts = status.Facts(summary=None, hard_timeout=False, grader_memory=True, memory_marked=False, mismatch=None,
                         cell_timeout=60, notebook_timeout=600, memory_mb=4096)
    code, lines = status.decide(facts, 0.0, 10.0)
    assert code == "crashed" and "scores 0" in lines[0]
