"""Grade one submission: a private course copy, a sandboxed kernel, results written by the grader.

``grade_one`` (every failure becomes a grade and a feedback line, never an exception):

1. copy the template course (source, release, gradebook) into a private folder only the grader
   can read, and make a short *channel* folder for the kernel's sockets;
2. bring the upload into shape (``intake``: safe copy, archives, relocations, artifacts) and
   rebuild the notebook on the release's skeleton (``repair``);
3. run grader-side evaluators declared for the assignment (e.g. grpo_format's held-out
   adherence, measured once per submission outside the student's kernel);
4. run ``autograder.grading.job`` (``nbgrader autograde`` + feedback) as the grader; its kernel starts
   through ``sandbox.launch`` (namespaces, own uid, no network, size-limited tmpfs, a copy of
   this submission only) and ``kernel_guard`` (sealed guard), executed by ``GuardedExecute``;
5. once the kernel and everything it started are dead, read the scores (the smaller of the
   notebook's and the gradebook's), apply the evaluators' tier scores, scrub hidden lines, and
   write ``OUT/feedback/<student>/<assignment>/`` and the formgrader copies in ``OUT``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat

from autograder.isolation import sandbox
from autograder.manifest import Assignment
from autograder.authoring.course import write_config
from autograder.reports.feedback import finish
from autograder.reports.feedback import finish as _finish
from autograder.intake.placement import Budget, check_artifacts, place_submission, submission_time
from autograder.grading.outcome import Result, Settings
from autograder.reports.scrub import ANSI, Scrubber

GUARD_MODULES = ["numpy", "numpy.testing", "numpy.linalg", "math", "operator", "functools", "autograder",
                 "autograder.kernel.exact"]
LAZY_MODULES = ["torch", "torch.testing", "torch.nn", "torch.nn.functional"]  # recorded on first import
IMPORTS_TORCH = re.compile(r"^\s*(import torch|from torch)", re.MULTILINE)


def safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def grade_cells(notebook) -> dict[str, float]:
    cells = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            cells[meta["grade_id"]] = float(meta.get("points", 0))
    return cells


def manual_points(notebook) -> float:
    total = 0.0
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type != "code":
            total += float(meta.get("points", 0))
    return total


def _guarded_modules(release) -> tuple[list[str], list[str]]:
    """torch is recorded at kernel start when the release imports it (no lazy window), else lazily."""
    text = "\n".join(c.get("source", "") for c in release.cells if c.cell_type == "code")
    if IMPORTS_TORCH.search(text):
        return GUARD_MODULES + LAZY_MODULES, []
    return GUARD_MODULES, LAZY_MODULES


def kernel_env(settings: Settings, assignment: Assignment, release, channel: Path, gpu: str | None,
               measurements: dict | None = None) -> dict:
    """The grading kernel's whole environment (the sandbox passes nothing else)."""
    modules, lazy = _guarded_modules(release)
    memory = settings.memory_mb or assignment.limits.memory_mb
    env = {
        "COURSE_PROFILE": settings.profile, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
        "HF_DATASETS_OFFLINE": os.environ.get("HF_DATASETS_OFFLINE", "1"), "MPLBACKEND": "Agg",
        "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1", "NBGRADER_EXECUTION": "autograde",
        # nbgrader scores a test cell 0 when anything reaches stderr: keep library warnings and
        # progress bars (model loading inside hidden tests) from costing a student points
        "PYTHONWARNINGS": "ignore", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
        "TQDM_DISABLE": "1",
        "AUTOGRADER_STATE_DIR": str(channel / "kernel-state"), "AUTOGRADER_GUARD_KEYFILE": str(channel / "guard.key"),
        "AUTOGRADER_MEMORY_MB": str(memory or 0), "AUTOGRADER_GUARD_MODULES": ",".join(modules),
        "AUTOGRADER_GUARD_LAZY": ",".join(lazy),
        # CUDA reserves far more address space than it uses: limit resident memory instead
        "AUTOGRADER_MEMORY_MODE": "rss" if gpu is not None else "as",
        "CUDA_VISIBLE_DEVICES": gpu if gpu is not None else "",
        "AUTOGRADER_MEASUREMENTS": json.dumps(measurements or {}),
        **sandbox.cache_env(),
    }
    return env


def _run_job(course: Path, assignment_id: str, student: str, env: dict, timeout: float,
             jobs=None) -> tuple[int | None, str]:
    """``autograder.grading.job`` as the grader, in a fork of the worker's job server (nbgrader already
    imported) or a fresh subprocess; past ``timeout`` its whole tree dies."""
    merged = {**os.environ, **env}
    merged["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), merged.get("PATH", "")])
    if jobs is not None:
        try:
            return jobs.run(course, assignment_id, student, merged, timeout)
        except (RuntimeError, OSError, ValueError):
            pass  # a dead job server: this one runs in its own process
    proc = subprocess.Popen([sys.executable, "-m", "autograder.grading.job", str(course), assignment_id, student], cwd=course,
                            env=merged, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
        return proc.returncode, log
    except subprocess.TimeoutExpired:
        try:
            import psutil

            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        except Exception:
            pass
        proc.kill()
        log, _ = proc.communicate()
        return None, log or ""


def _kill_leftovers(marker: str) -> None:
    """Unsandboxed kernels: kill processes a submission left behind (they carry its marker)."""
    try:
        import psutil
    except ImportError:
        return
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.info["pid"] == me:
            continue
        try:
            if proc.environ().get("AUTOGRADER_STATE_DIR") == marker:
                proc.kill()
        except (psutil.Error, OSError):
            pass


def _short_tmp() -> str:
    """Unix socket paths are limited to ~107 bytes: keep the channel folder short."""
    default = tempfile.gettempdir()
    return default if len(default) < 40 else "/tmp"


def grade_one(template: Path, workdir: Path, student: str, assignment: Assignment, folder: Path,
              out: Path, env: dict | None = None, settings: Settings | None = None, gpu: str | None = None,
              evaluators=None, jobs=None) -> Result:
    """Grade one submission in a private copy of ``template``; write its feedback under ``out``."""
    settings = settings or Settings(profile=(env or {}).get("COURSE_PROFILE", "tiny"))
    started = time.perf_counter()
    release = nbformat.read(template / "release" / assignment.id / f"{assignment.id}.ipynb", as_version=4)
    grade_points = grade_cells(release)
    result = Result(student, assignment.id, max_score=sum(grade_points.values()), manual_max=manual_points(release),
                    cells={name: [0.0, points] for name, points in grade_points.items()})
    lms = settings.lms.get(student, {}) if settings.lms else {}
    when, lms_late, source = submission_time(folder, f"{assignment.id}.ipynb", lms)
    result.timestamp_source = source
    if when is not None:
        result.submitted_at = when.isoformat(timespec="seconds")
    if lms_late is not None:
        result.late = lms_late
    elif when is not None and settings.deadline is not None:
        result.late = when > settings.deadline
    if assignment.gpu_needed(settings.profile) and gpu is None:
        result.status = "no-gpu"
        result.feedback.append(
            f"{assignment.id} needs a GPU in the full profile and this grader has none: grade it on a GPU "
            "machine (or `--ray` with GPU workers), or use `--profile tiny` for a dry run")
        return finish(result, out, started, None)

    course = Path(tempfile.mkdtemp(prefix=f"{safe_id(student)[:40]}--{assignment.id}-", dir=workdir))
    channel = Path(tempfile.mkdtemp(prefix="agk-", dir=_short_tmp()))
    isolation = sandbox.probe(settings.sandbox)
    result.isolation = isolation.describe()
    uid = sandbox.next_uid() if isolation.mode == "root" else None
    try:
        result = _grade_in(course, channel, template, result, release, student, assignment, folder, out, settings,
                           gpu, started, isolation, uid, evaluators, jobs)
        return result
    finally:
        if uid is not None:
            sandbox.kill_uid(uid)
        _kill_leftovers(str(channel / "kernel-state"))
        if not os.environ.get("AUTOGRADER_KEEP_COURSES"):  # debugging: keep the private course copies
            shutil.rmtree(course, ignore_errors=True)
            shutil.rmtree(channel, ignore_errors=True)


def _grade_in(course, channel, template, result, release, student, assignment, folder, out, settings, gpu, started,
              isolation, uid, evaluators, jobs) -> Result:
    def finish(result, out, started, html_file, scrub=None):
        """Feedback lines never show the grader's own folders (course copy, channel, uploads)."""
        for path, label in ((course, "<grading folder>"), (channel, "<kernel channel>"), (folder, "<submission>"),
                            (Path(tempfile.gettempdir()), "<tmp>")):
            result.feedback = [line.replace(str(path), label) for line in result.feedback]
        return _finish(result, out, started, html_file, scrub=scrub)

    shutil.copytree(template, course, dirs_exist_ok=True)
    timeout = settings.timeout or assignment.limits.cell_timeout_s
    write_config(course, timeout, grading=True, guard=settings.guard, channel=channel)
    submitted = course / "submitted" / student / assignment.id
    submitted.parent.mkdir(parents=True, exist_ok=True)
    budget = Budget(assignment.limits.max_submission_mb * 2**20)
    notebook, problem, notes = place_submission(folder, assignment, submitted, budget)
    result.feedback.extend(notes)
    if notebook is None:
        result.status = "missing" if problem.startswith("no notebook") else "invalid"
        result.feedback.append(problem)
        return finish(result, out, started, None)
    from autograder.intake.repair import repair

    release_path = course / "release" / assignment.id / f"{assignment.id}.ipynb"
    try:
        fixed, repairs = repair(nbformat.read(notebook, as_version=4), release)
    except Exception as error:  # a notebook so odd it cannot be rebuilt
        result.status = "invalid"
        result.feedback.append(f"{assignment.id}.ipynb could not be read cell by cell ({type(error).__name__})")
        return finish(result, out, started, None)
    nbformat.write(fixed, notebook)
    result.feedback.extend(repairs)
    artifact_notes, mismatch = check_artifacts(submitted, assignment, settings.profile)
    result.feedback.extend(artifact_notes)
    if result.submitted_at:
        (submitted / "timestamp.txt").write_text(
            datetime.fromisoformat(result.submitted_at).strftime("%Y-%m-%d %H:%M:%S.%f %Z").strip())

    from autograder import evaluators as evaluator_module

    declared = evaluator_module.declared(assignment, settings.profile)
    if declared:
        pool = evaluators or evaluator_module.default_pool()
        result.measurements = pool.measure(declared, submitted, settings, gpu)
        # the tier cells may print the thresholds that apply in this profile
        result.measurements[declared["name"]]["thresholds"] = dict(declared["tiers"])

    env = kernel_env(settings, assignment, release, channel, gpu, result.measurements)
    (channel / "kernel-state").mkdir()
    job_env = {"JUPYTER_PATH": str(course / "jupyter"), "JUPYTER_RUNTIME_DIR": str(channel),
               "AUTOGRADER_GRADER_STATE": str(course / ".grader-state"),
               "AUTOGRADER_GUARD_KEYFILE": env["AUTOGRADER_GUARD_KEYFILE"]}
    if isolation.isolated:
        spec = sandbox.Spec(mode=isolation.mode, channel=str(channel), uid=uid or sandbox.UID_BASE,
                            gid=uid or sandbox.UID_BASE, disk_mb=assignment.limits.disk_mb,
                            workdir=f"{sandbox.HOME}/{assignment.id}", notebooks=(str(notebook),),
                            readonly=tuple(sandbox.cache_paths()), gpu=gpu is not None, env=env)
        job_env[sandbox.SPEC_VARIABLE] = str(spec.write())
    else:  # the kernel inherits the job's environment (nbgrader sets NBGRADER_EXECUTION itself)
        job_env.update({k: v for k, v in env.items() if k != "NBGRADER_EXECUTION"})
    code, log = _run_job(course, assignment.id, student, job_env, timeout=assignment.limits.notebook_timeout_s, jobs=jobs)
    logs = Path(out) / "logs" / student  # for the instructor, never shown to the student
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{assignment.id}.log").write_text(log[-200_000:])
    if "Exception while loading config file" in log:  # never grade without the guard and limits
        raise RuntimeError(f"nbgrader could not load the grading configuration; see {logs / assignment.id}.log")
    scrub = Scrubber.from_notebooks(course / "source" / assignment.id / f"{assignment.id}.ipynb", release_path)
    if code is None:
        result.status = "timeout"
        result.feedback.append(f"grading stopped after the {assignment.limits.notebook_timeout_s} s limit for the whole notebook")
        _apply_tiers(result, declared, None)
        return finish(result, out, started, None, scrub=scrub)
    summary = {}
    for line in reversed(log.splitlines()):
        if line.startswith("AUTOGRADER-JOB "):
            summary = json.loads(line[len("AUTOGRADER-JOB "):])
            break
    autograded = course / "autograded" / student / assignment.id / f"{assignment.id}.ipynb"
    if not autograded.exists() or not summary.get("autograde"):
        result.status = "crashed"
        reason = next((line.strip() for line in reversed(log.splitlines())
                       if ("Error" in line or "error" in line) and "above traceback" not in line), "")
        result.feedback.append(f"the notebook could not be graded: {ANSI.sub('', reason)[:300] or 'nbgrader produced no output'}")
        _apply_tiers(result, declared, None)
        return finish(result, out, started, None, scrub=scrub)
    from autograder.reports import gradebook

    try:
        record = gradebook.extract(course, assignment.id, student)
    except Exception as error:  # a gradebook without this submission: nbgrader gave up early
        record = None
        result.status = "crashed"
        result.feedback.append(f"no grades were recorded ({type(error).__name__})")
    points = {name: pair[1] for name, pair in result.cells.items()}
    file_scores = _notebook_scores(autograded, points)
    for name in points:
        saved = (record or {}).get("grades", {}).get(f"{assignment.id}/{name}", {}).get("auto_score")
        candidates = [file_scores.get(name, 0.0)] + ([float(saved)] if saved is not None else [])
        result.cells[name][0] = max(0.0, min(min(candidates), points[name]))  # never more than both agree on
    messages, enames = summary.get("messages", {}), set(summary.get("enames", []))
    result.cell_messages = {name: msg for name, msg in messages.items() if result.cells.get(name, [1, 1])[0] < points.get(name, 0)}
    tier_ids = _apply_tiers(result, declared, record)
    result.score = sum(pair[0] for pair in result.cells.values())
    for name, message in result.cell_messages.items():
        if name not in tier_ids:
            result.feedback.append(f"{name}: {message}")

    state = course / ".grader-state"
    memory = settings.memory_mb or assignment.limits.memory_mb
    guard_notes = (state / "guard.txt").read_text().splitlines() if (state / "guard.txt").exists() else []
    for line in dict.fromkeys(guard_notes):
        if line.startswith("tampered: "):
            result.feedback.append(f"the notebook changed how the grader runs cells ({line[10:300]}): the checks "
                                   "it affected were not trusted and scored 0")
        else:
            result.feedback.append(f"before the tests ran, the grader restored what the notebook replaced: {line}")
    if "CellTimeoutError" in enames:
        result.status = "timeout"
        result.feedback.append(f"a cell ran past the {timeout} s per-cell limit and was interrupted; "
                               "later cells did not run (points earned before are kept)")
    elif (channel / "kernel-state" / "memory").exists() or "MemoryError" in enames:
        result.status = "out-of-memory"
        result.feedback.append(f"the notebook needed more than the {memory} MiB memory limit"
                               + ("; the kernel was stopped there" if "DeadKernelError" in enames else ""))
    elif "DeadKernelError" in enames or "DeadKernelError" in log:
        result.status = "crashed"
        result.feedback.append("the Python kernel died while running the notebook (os._exit, a killed process or a "
                               "crash in native code); later cells did not run (points earned before are kept)")
    elif "IntegrityError" in enames:
        result.status = "integrity"
    elif mismatch:
        result.status = "wrong-profile"
    elif result.status == "ok" and result.score < result.max_score:
        result.status = "failed-tests"
    if mismatch:
        result.feedback.append(mismatch)
    html_file = course / "feedback" / student / assignment.id / f"{assignment.id}.html"
    result._record = record  # type: ignore[attr-defined]  (merged into OUT/gradebook.db by the batch)
    _keep_for_formgrader(course, out, student, assignment.id)
    return finish(result, out, started, html_file if summary.get("feedback") and html_file.exists() else None,
                  scrub=scrub)


def _notebook_scores(path: Path, release_points: dict[str, float]) -> dict[str, float]:
    """nbgrader's own rule (error -> 0, numeric result -> partial, else full) on the autograded file."""
    from nbgrader.utils import determine_grade

    scores = {}
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if grade_id in release_points and cell.cell_type == "code" and meta.get("grade"):
            meta["points"] = release_points[grade_id]
            score, _ = determine_grade(cell)
            scores[grade_id] = float(score or 0.0)
    return scores


def _apply_tiers(result: Result, declared: dict | None, record: dict | None) -> set:
    """Tier cells score from the grader's own measurement; whatever the kernel printed is ignored."""
    if not declared:
        return set()
    from autograder.evaluators import apply_tiers

    return apply_tiers(result, declared, record)


def _keep_for_formgrader(course: Path, out: Path, student: str, assignment_id: str) -> None:
    """OUT/submitted and OUT/autograded: the notebooks (not the artifacts) formgrader opens."""
    for kind in ("submitted", "autograded"):
        source = course / kind / student / assignment_id
        target = Path(out) / kind / student / assignment_id
        if not source.is_dir():
            continue
        target.mkdir(parents=True, exist_ok=True)
        for name in (f"{assignment_id}.ipynb", "timestamp.txt"):
            if (source / name).is_file():
                shutil.copyfile(source / name, target / name)
