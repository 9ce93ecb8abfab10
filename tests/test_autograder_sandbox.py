"""The sandbox on its own (no nbgrader): what a command inside it can see and do. Fast.

Runs in every mode this host offers (``root`` when the tests run as root, ``user`` where
unprivileged user namespaces work). A mode the host lacks is skipped with the probe's reason; on
Linux CI (root, namespaces) both run, and ``test_this_ci_host_isolates`` fails if neither does.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

INSIDE = r'''
import json, os, socket, sys, time
report = {"pid": os.getpid(), "uid": os.getuid(), "cwd": os.getcwd(), "files": sorted(os.listdir("."))}
report["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
import resource
report["file_limit"] = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
report["secret"] = os.path.exists(sys.argv[1])
report["repo_solutions"] = os.path.exists(sys.argv[2])
report["autograder"] = sorted(p for p in os.listdir(sys.argv[3]) if p != "__pycache__")
report["env"] = dict(os.environ)
report["token_readable"] = False
for path in (sys.argv[5], os.path.expanduser("~/.cache/huggingface/token")):
    try:
        open(path).read()
        report["token_readable"] = True
    except OSError:
        pass
report["hub"] = sorted(os.listdir(os.environ["HF_HUB_CACHE"])) if os.environ.get("HF_HUB_CACHE") else None
try:  # a notebook makes its artifacts folder and caches (issue 31: tiny_grpo without its artifacts/)
    os.makedirs("artifacts/checkpoints")
    os.makedirs(os.path.expanduser("~/.cache/x"))
    open("artifacts/checkpoints/a.txt", "w").write("ok")
    open(os.path.join(os.environ["MPLCONFIGDIR"], "fontlist.json.tmp"), "w").write("{}")  # matplotlib's cache
    report["can_create"] = True
except OSError as error:
    report["can_create"] = repr(error)
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
        time.sleep(2)
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
    from autograder.isolation.host_isolation import probe

    found = []
    for mode in ("root", "user"):
        isolation = probe(mode)
        found.append(pytest.param(mode, marks=pytest.mark.skipif(
            not isolation.isolated, reason=f"{mode} mode unavailable here: {isolation.reason}")))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.environ.get("CI_NO_SANDBOX") == "1",
                    reason="isolation needs Linux namespaces (CI_NO_SANDBOX=1 marks a Linux host known to lack them)")
def test_this_ci_host_isolates():
    """On the kit's own Linux machines (root, namespaces), kernels are isolated: a grader that
    silently fell back to no isolation would pass every other test here."""
    from autograder.isolation.host_isolation import probe

    isolation = probe()
    assert isolation.isolated, f"no isolation on this Linux host: {isolation.reason}"
    assert isolation.mode == ("root" if os.geteuid() == 0 else "user")


def _wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.parametrize("mode", _modes())
def test_a_command_sees_only_its_own_copy_and_no_grader_secret(mode, tmp_path, monkeypatch):
    from autograder.isolation import filesystem, launcher
    from autograder.isolation.host_isolation import next_uid
    from autograder.isolation.spec import Spec

    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    secret = course / "source" / "hidden_tests.ipynb"
    secret.write_text("### BEGIN HIDDEN TESTS")
    hf_home = tmp_path / "hf"
    (hf_home / "hub" / "models--x--y").mkdir(parents=True)
    token = hf_home / "token"
    token.write_text("hf_instructorsecret")
    os.chmod(token, 0o600)
    os.chmod(hf_home, 0o700)
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_TOKEN", "hf_instructorsecret")
    work = tmp_path / "submission"
    work.mkdir()
    (work / "answer.py").write_text("x = 1")
    script = tmp_path / "inside.py"
    script.write_text(INSIDE)
    outside = tmp_path / "outside.txt"
    channel = tmp_path / "channel"
    channel.mkdir()
    uid = next_uid() if mode == "root" else os.getuid()
    if mode == "root":
        os.chown(channel, uid, uid)
    mounts, cache_env = filesystem.stage_caches(tmp_path / "staged", other_uid=mode == "root")
    spec = Spec(mode=mode, channel=str(channel), uid=uid, disk_mb=32, workdir="/home/student/work",
                work_from=str(work), mounts=(*mounts, (str(script), "/run/inside.py")), env=cache_env,
                argv=[sys.executable, "/run/inside.py", str(secret), str(Path(filesystem.autograder_dir()).parent
                                                                         / "solutions"),
                      filesystem.autograder_dir(), str(outside), str(token)])
    run = subprocess.run([sys.executable, "-I", "-c", launcher.LAUNCH_BOOT, "--spec", str(spec.write(tmp_path))],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["cwd"] == "/home/student/work" and report["files"] == ["answer.py"]
    assert report["can_create"] is True, report["can_create"]  # its own folder and home are writable
    assert report["file_limit"] == 32 * 2**20  # no file larger than its disk, the channel folder's included
    assert report["pid"] == 2 and report["visible_pids"] == [1, 2]  # init and itself: nothing else
    assert not report["secret"] and not report["repo_solutions"]
    assert report["autograder"] == ["__init__.py", "kernel"]  # no evaluators/, grading/, manifests
    assert not report["network"] and report["quota"] and not report["wrote_outside"]
    assert not report["token_readable"] and "hf_instructorsecret" not in json.dumps(report["env"])
    assert report["env"]["HOME"] == "/home/student" and str(hf_home) not in json.dumps(report["env"])
    assert report["hub"] == ["models--x--y"]  # the cache's hub/ is there, read-only, its token is not
    assert oct(os.stat(token).st_mode & 0o777) == "0o600" and oct(os.stat(hf_home).st_mode & 0o777) == "0o700"
    if mode == "root":
        assert report["uid"] == uid
    # the daemon would write within 2 s: it died with the sandbox
    assert not _wait_for(outside.exists, timeout=4)


FORKS_PAST_THE_LIMIT = """
import os, signal, time
others = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid()))
for pid in others:  # a watchdog inside the sandbox would be one of these
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
for _ in range(2):
    if os.fork() == 0:
        break
block = bytearray(180 * 2**20)
time.sleep(60)
"""


@pytest.mark.parametrize("mode", _modes())
def test_the_memory_watchdog_runs_outside_where_the_sandbox_cannot_stop_it(mode, tmp_path):
    """Issue 30 review: the tree watchdog ran inside the sandbox, where the kernel could kill it and
    then fork past the limit. Three processes of 180 MB under a 400 MB limit, after killing everything
    they can see, are stopped together and the limit is named."""
    from autograder.isolation import launcher
    from autograder.isolation.host_isolation import next_uid
    from autograder.isolation.spec import Spec

    channel = tmp_path / "channel"
    channel.mkdir()
    uid = next_uid() if mode == "root" else os.getuid()
    if mode == "root":
        os.chown(channel, uid, uid)
    script = tmp_path / "forks.py"
    script.write_text(FORKS_PAST_THE_LIMIT)
    spec = Spec(mode=mode, channel=str(channel), uid=uid, disk_mb=32, memory_mb=400,
                workdir="/home/student/work", work_from=str(tmp_path / "channel"),
                mounts=((str(script), "/run/forks.py"),), argv=[sys.executable, "/run/forks.py"])
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-I", "-c", launcher.LAUNCH_BOOT, "--spec", str(spec.write(tmp_path))],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and time.monotonic() - started < 50, run.stderr
    assert "passed the 400 MiB limit" in (channel / "kernel-state" / "memory").read_text()


def test_limits_fall_back_to_rlimits_without_a_delegated_cgroup(tmp_path):
    from autograder.isolation import limits

    assert limits.delegated(None).startswith("no cgroup v2")
    fake = tmp_path / "cg"
    fake.mkdir()
    (fake / "cgroup.controllers").write_text("cpu io\n")
    assert "memory, pids" in limits.delegated(fake)


def test_limits_use_a_delegated_cgroup(tmp_path, monkeypatch):
    """A delegated cgroup-v2 folder (simulated: plain files) gets memory.max, pids.max and the pid."""
    from autograder.isolation import limits

    parent = tmp_path / "cg"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpu memory pids\n")
    (parent / "cgroup.subtree_control").write_text("")
    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):  # a cgroup folder comes with its control files
        real_mkdir(self, *args, **kwargs)
        for name in ("memory.max", "pids.max", "cgroup.procs", "memory.swap.max"):
            (self / name).touch()

    monkeypatch.setattr(Path, "mkdir", mkdir)
    applied = limits.enter_cgroup(1024, 256, parent=parent)
    group = Path(applied.group)
    assert applied.how == "cgroup v2"
    assert (group / "memory.max").read_text() == str(1024 * 2**20)
    assert (group / "pids.max").read_text() == "256"
    assert (group / "cgroup.procs").read_text() == str(os.getpid())
    assert (group / "memory.swap.max").read_text() == "0"


def test_a_python_under_tmp_or_home_is_bound_over_the_tmpfs(tmp_path, monkeypatch):
    """A kit cloned into /tmp (its venv there) or a venv in the instructor's home: the sandbox's
    tmpfs for /tmp and /home come first, so the interpreter bound under them stays visible."""
    from autograder.isolation import bwrap, filesystem
    from autograder.isolation.spec import Spec

    venv = "/tmp/some-clone/.venv"
    monkeypatch.setattr(filesystem, "readonly_roots", lambda: ["/usr", venv, "/home/teacher/kit/.venv"])
    spec = Spec(mode="user", channel=str(tmp_path), uid=os.getuid(), disk_mb=16, workdir="/home/student/x",
                argv=["true"])
    command = bwrap.build(spec, ["true"], os.getuid())
    try:
        args = [str(a) for a in command.args]
    finally:
        command.close()
    tmpfs = {args[i + 1]: i for i, a in enumerate(args) if a == "--tmpfs"}
    binds = {args[i + 1]: i for i, a in enumerate(args) if a == "--ro-bind"}
    assert tmpfs["/tmp"] < binds[venv] and tmpfs["/home"] < binds["/home/teacher/kit/.venv"]


def test_concurrent_graders_get_disjoint_sandbox_uids():
    """Issue 31: uids came from the grader's pid (pid % 5000), and ending a sandbox kills every process of
    its uid, so two graders on one host could end each other's kernels. Each grader now holds a block."""
    from autograder.isolation.host_isolation import uid_block

    script = ("import sys, time; from autograder.isolation.host_isolation import uid_block; b = uid_block(); "
              "print(b.start, flush=True); time.sleep(3)")
    graders = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    starts = {int(g.stdout.readline()) for g in graders}
    for grader in graders:
        grader.wait()
    starts.add(uid_block().start)  # this process is a grader too
    assert len(starts) == 4, starts


@pytest.mark.parametrize("mode", _modes())
def test_a_submission_of_many_files_is_held_to_the_disk_limit(mode, tmp_path):
    """Issue 31: past 400 files the work folder became a writable host folder, where a notebook wrote
    2,000 MB against a 1,024 MB limit. Every file is now copied into the size-limited tmpfs."""
    from autograder.isolation import launcher
    from autograder.isolation.host_isolation import next_uid
    from autograder.isolation.spec import Spec

    work = tmp_path / "submission"
    (work / "data").mkdir(parents=True)
    for i in range(450):
        (work / "data" / f"{i}.txt").write_text(str(i))
    script = tmp_path / "fill.py"
    script.write_text("import json, os\nreport = {'files': len(os.listdir('data'))}\ntry:\n"
                      "    with open('big.bin', 'wb') as f:\n        for _ in range(48):\n"
                      "            f.write(b'\\0' * 2**20)\n    report['wrote'] = 48\n"
                      "except OSError as error:\n    report['wrote'] = type(error).__name__\n"
                      "print(json.dumps(report))\n")
    channel = tmp_path / "channel"
    channel.mkdir()
    uid = next_uid() if mode == "root" else os.getuid()
    if mode == "root":
        os.chown(channel, uid, uid)
    spec = Spec(mode=mode, channel=str(channel), uid=uid, disk_mb=32, workdir="/home/student/work",
                work_from=str(work), mounts=((str(script), "/run/fill.py"),), argv=[sys.executable, "/run/fill.py"])
    run = subprocess.run([sys.executable, "-I", "-c", launcher.LAUNCH_BOOT, "--spec", str(spec.write(tmp_path))],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {"files": 450, "wrote": "OSError"}, report
    assert not (channel / "work-copy").exists()
