"""The sandbox on its own (no nbgrader): what a command inside it can see and do. Fast.

Runs in every mode this host offers (``root`` when the tests run as root, ``user`` where
unprivileged user namespaces work); on a host with neither, the probe's one-line reason is what
the batch prints, and these tests say so instead of passing silently.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

INSIDE = r'''
import json, os, socket, sys, time
report = {"pid": os.getpid(), "uid": os.getuid(), "cwd": os.getcwd(), "files": sorted(os.listdir("."))}
report["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
report["secret"] = os.path.exists(sys.argv[1])
report["repo_solutions"] = os.path.exists(sys.argv[2])
report["autograder"] = sorted(os.listdir(sys.argv[3]))
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    report["network"] = True
except OSError:
    report["network"] = False
try:
    open(sys.argv[4], "w").write("escaped")
    report["wrote_outside"] = True
except OSError:
    report["wrote_outside"] = False
try:
    with open("/tmp/big", "wb") as handle:
        for _ in range(64):
            handle.write(b"\0" * 2**20)
    report["quota"] = False
except OSError:
    report["quota"] = True
if os.fork() == 0:  # a detached daemon that would write outside after we exit
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for path in (sys.argv[4], "/tmp/daemon-was-here"):
            try:
                open(path, "w").write("daemon")
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
os.wait()
print(json.dumps(report))
'''


def _modes():
    from autograder.isolation.sandbox import probe

    found = []
    for mode in ("root", "user"):
        isolation = probe(mode)
        found.append(pytest.param(mode, marks=pytest.mark.skipif(
            not isolation.isolated, reason=f"{mode} mode unavailable here: {isolation.reason}")))
    return found


def test_some_isolation_is_available_or_explained():
    from autograder.isolation.sandbox import probe

    isolation = probe()
    assert isolation.isolated or isolation.reason, isolation


@pytest.mark.parametrize("mode", _modes())
def test_a_command_sees_only_its_own_copy(mode, tmp_path):
    from autograder.isolation import sandbox

    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    secret = course / "source" / "hidden_tests.ipynb"
    secret.write_text("### BEGIN HIDDEN TESTS")
    work = tmp_path / "submission"
    work.mkdir()
    (work / "answer.py").write_text("x = 1")
    script = tmp_path / "inside.py"
    script.write_text(INSIDE)
    outside = tmp_path / "outside.txt"
    channel = Path(tempfile.mkdtemp(prefix="agk-"))
    try:
        spec = sandbox.Spec(mode=mode, channel=str(channel), uid=sandbox.next_uid(), gid=sandbox.next_uid(), disk_mb=32,
                            workdir="/home/student/work", copy_from=str(work), readonly=(str(script),),
                            argv=[sys.executable, str(script), str(secret), str(Path(sandbox.autograder_dir()).parent
                                                                               / "solutions"),
                                  sandbox.autograder_dir(), str(outside)])
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-I", "-c", sandbox.LAUNCH_BOOT, "--spec", str(spec.write())],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout.strip().splitlines()[-1])
        seconds = time.perf_counter() - started
    finally:
        import shutil

        shutil.rmtree(channel, ignore_errors=True)
    assert report["cwd"] == "/home/student/work" and report["files"] == ["answer.py"]
    assert report["pid"] == 2 and report["visible_pids"] == [1, 2]  # init and itself: nothing else
    assert not report["secret"] and not report["repo_solutions"]
    assert report["autograder"] == sorted(sandbox.KERNEL_MODULES)  # no samples/, no evaluators/
    assert not report["network"] and report["quota"]
    assert not outside.exists()  # (in user mode the path may exist in the sandbox's own tmpfs: not here)
    if mode == "root":
        assert report["uid"] >= sandbox.UID_BASE
    time.sleep(4)  # the daemon would have written by now: it died with the sandbox
    assert not outside.exists()
    assert seconds < 60
