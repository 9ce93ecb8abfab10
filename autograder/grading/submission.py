"""Grade one submission: a private workspace, a sandboxed kernel, results written by the grader.

:func:`grade_one` (every failure becomes a grade and a feedback line, never an exception):

1. **intake**: copy the upload into the private course copy (``intake.placement``: safe copy,
   archives, relocations), rebuild the notebook on the release's skeleton (``intake.repair``),
   check the declared artifacts (``intake.artifacts``: refused adapters are removed);
2. **measure**: run the assignment's grader-side evaluator on the artifact (``evaluators``); a test
   that names one with inputs from the notebook asks while the job runs (``measure_on_request``);
3. **run**: ``autograder.grading.job`` (nbgrader autograde + feedback) as the grader; its kernel
   starts through ``autograder.isolation.launcher`` (bubblewrap) and ``autograder.kernel``
   (limits), executed by ``grading.executor.ProbeExecute`` (hidden tests probed there, judged here);
4. **score**: once the kernel and everything it started are dead, read the scores (``scoring``),
   the tier cells from the grader's measurement, and the status from facts (``status``);
5. **report**: scrub hidden lines, tokens and grader paths; write ``OUT/feedback/<student>/<id>/``
   and the formgrader copies in ``OUT``.

Returns an :class:`~autograder.outcome.Outcome`: the Result and the submission's
gradebook record (the batch merges it into ``OUT/gradebook.db``).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.grading import scoring, status
from autograder.grading.job_settings import JOB_MEMORY_MB, JOB_VARIABLE, JobSettings
from autograder.grading.kernel_env import kernel_env, sandbox_spec
from autograder.grading.late import nbgrader_settings
from autograder.grading.workspace import Workspace
from autograder.isolation import filesystem, processes
from autograder.isolation.host_isolation import probe
from autograder.isolation.spec import SPEC_VARIABLE
from autograder.manifest import HIDDEN_TESTS, Assignment
from autograder.nbconfig import Grading, write_course_config
from autograder.outcome import JobSummary, Outcome, Result, Settings
from autograder.reports.feedback import finish as write_feedback
from autograder.reports.scrub import Scrubber


def hard_limit(notebook_timeout: int) -> int:
    """When the job is killed: the executor stops starting cells at the notebook's limit, and this
    margin (a quarter of the limit, 10 to 60 s) lets a cell in flight end and the feedback be written."""
    return notebook_timeout + min(60, max(10, notebook_timeout // 4))


@dataclass
class Submission:
    """One submission and what grading it needs (the stages below read it instead of 16 arguments)."""
    student: str
    assignment: Assignment
    folder: Path
    out: Path
    settings: Settings
    gpu: str | None
    release: object
    started: float = field(default_factory=time.perf_counter)

    @property
    def memory_mb(self) -> int:
        return self.settings.memory_mb or self.assignment.limits.memory_mb

    @property
    def cell_timeout(self) -> int:
        return self.settings.timeout or self.assignment.limits.cell_timeout_s


def new_result(sub: Submission) -> Result:
    """Points available, submission time and lateness (from the LMS's metadata when collect kept it)."""
    from autograder.intake.placement import submission_time

    points, manual = scoring.release_points(sub.release)
    result = Result(sub.student, sub.assignment.id, max_score=sum(points.values()), manual_max=manual,
                    cells={name: [0.0, p] for name, p in points.items()})
    lms = sub.settings.lms.get(sub.student, {}) if sub.settings.lms else {}
    when, lms_late, source = submission_time(sub.folder, f"{sub.assignment.id}.ipynb", lms)
    result.timestamp_source = source
    if when is not None:
        result.submitted_at = when.isoformat(timespec="seconds")
    if lms_late is not None:
        result.late = lms_late
    elif when is not None and sub.settings.deadline is not None:
        result.late = when > sub.settings.deadline
    from autograder.grading.late import with_extension

    result.late, line = with_extension(result.late, result.submitted_at, sub.settings.extensions.get(sub.student),
                                       str(lms.get("upload_time") or ""))
    if line:
        result.feedback.append(line)
        result.timestamp_source = f"{result.timestamp_source}; extension" if result.timestamp_source else "extension"
    return result


@dataclass(frozen=True)
class Lent:
    """What a runner lends one grading, each optional: a GPU, the evaluator pool, the job server."""
    gpu: str | None = None
    evaluators: object = None
    jobs: object = None


def grade_one(template: Path, workdir: Path, job: tuple[str, Assignment, Path], out: Path,
              settings: Settings | None = None, lent: Lent = Lent()) -> Outcome:
    """Grade one submission, ``job`` = (student, assignment, its folder), in a private copy of
    ``template`` under ``workdir``; write its feedback under ``out``."""
    student, assignment, folder = job
    settings, gpu = settings or Settings(), lent.gpu
    release = nbformat.read(template / "release" / assignment.id / f"{assignment.id}.ipynb", as_version=4)
    sub = Submission(student, assignment, Path(folder), Path(out), settings, gpu, release)
    result = new_result(sub)
    if assignment.gpu_needed(settings.profile) and gpu is None:
        result.status = "no-gpu"
        result.feedback.append(
            f"{assignment.id} needs a GPU in the {settings.profile} profile and this grader has none: grade it on a "
            "GPU machine (or `--ray` with GPU workers), or use `--profile tiny` for a dry run")
        return Outcome(write_feedback(result, sub.out, sub.started, None, scrub=Scrubber(set())))
    isolation = probe(settings.sandbox)
    result.isolation = isolation.describe()
    workspace = Workspace.create(template, workdir, student, assignment.id, isolation)
    workspace.paths[str(sub.folder)] = "<submission>"
    try:
        return _grade_in(sub, workspace, result, lent)
    finally:
        workspace.cleanup()


def _scrubber(sub: Submission, ws: Workspace) -> Scrubber:
    source = ws.course / "source" / sub.assignment.id / f"{sub.assignment.id}.ipynb"
    release = ws.course / "release" / sub.assignment.id / f"{sub.assignment.id}.ipynb"
    return Scrubber.from_notebooks(source, release, ws.paths)


class Stopwatch:
    """Seconds per stage into ``result.timings``."""

    def __init__(self, result: Result):
        self.timings, self.mark = result.timings, time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round(self.timings.get(stage, 0.0) + now - self.mark, 3)
        self.mark = now


def _grade_in(sub: Submission, ws: Workspace, result: Result, lent: Lent) -> Outcome:
    watch = Stopwatch(result)
    result.timings["workspace"] = round(watch.mark - sub.started, 3)
    write_course_config(ws.course, sub.cell_timeout, Grading(
        tests_dir=ws.course / HIDDEN_TESTS / sub.assignment.id, partial_credit=sub.assignment.partial_credit,
        channel=ws.channel, late=nbgrader_settings(sub.settings.late_penalty)))
    scrub = _scrubber(sub, ws)
    notebook, mismatch = _intake(sub, ws, result)
    watch.lap("intake")
    if notebook is None:
        return Outcome(write_feedback(result, sub.out, sub.started, None, scrub=scrub))
    from autograder import evaluators as evaluator_module

    declared = evaluator_module.declared(sub.assignment, sub.settings.profile)
    if declared and not mismatch:
        pool = lent.evaluators or default_pool()
        result.measurements = pool.measure(declared, notebook.parent, sub.settings, sub.gpu)
        result.measurements[declared["name"]]["thresholds"] = dict(declared["tiers"])
        watch.lap("measure")
    summary, killed = _run_job(sub, ws, notebook, result.measurements.get(declared["name"]) if declared else None, lent)
    watch.lap("job")
    if summary:
        result.timings.update({f"job.{k}": v for k, v in summary.seconds.items()})
    record = _gradebook_record(ws, sub) if summary and summary.autograde else None
    autograded = ws.course / "autograded" / sub.student / sub.assignment.id / f"{sub.assignment.id}.ipynb"
    # past the grader's own memory budget nothing the job recorded is trusted: the submission scores 0
    scoring.score_cells(result, autograded if summary and summary.autograde else None, record,
                        None if killed == "memory" else ws.state)
    tier_ids = scoring.score_tier_cells(result, declared, record, mismatch)
    if killed == "memory":
        for pair in result.cells.values():
            pair[0] = 0.0
    result.score = scoring.total(result)
    _explain(result, summary, tier_ids)
    facts = status.Facts(summary=summary, hard_timeout=killed == "timeout", grader_memory=killed == "memory",
                         memory_marked=status.memory_marked(ws.kernel_state), mismatch=mismatch,
                         cell_timeout=sub.cell_timeout, notebook_timeout=sub.assignment.limits.notebook_timeout_s,
                         memory_mb=sub.memory_mb)
    result.status, lines = status.decide(facts, result.score, result.max_score)
    result.feedback += lines + ([mismatch] if mismatch else [])
    _keep_for_formgrader(ws, sub)
    watch.lap("score")
    earlier = sub.settings.regrades.get(f"{sub.student}/{sub.assignment.id}")
    if earlier is not None:
        from datetime import UTC, datetime

        result.feedback.append(f"regraded {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: {earlier:g} -> {result.score:g} "
                               "autograded points (written grades kept)")
    html = ws.course / "feedback" / sub.student / sub.assignment.id / f"{sub.assignment.id}.html"
    page = html if summary and summary.feedback and html.exists() else None
    outcome = Outcome(write_feedback(result, sub.out, sub.started, page, scrub=scrub), record)
    watch.lap("report")
    return outcome


def _measure_on_request(sub: Submission, ws: Workspace, notebook: Path, lent: Lent):
    """How the grader answers a test that asks for a measurement while the job runs
    (``grading.measure_on_request``): the test's own evaluator (``EVALUATE_WITH``), from the same pool.
    None when no test of the assignment names one (nothing will ask)."""
    from autograder import hidden_test_files

    tests = hidden_test_files.load(ws.course / HIDDEN_TESTS / sub.assignment.id)
    evaluators = {name: test.constant("EVALUATE_WITH") for name, test in tests.items()}
    if not any(evaluators.values()):
        return None

    def measure(name: str, inputs: dict) -> dict:
        evaluator = evaluators.get(name)
        if evaluator is None:
            return {"error": f"{name} names no evaluator"}
        spec = {"name": evaluator, "artifact": tests[name].constant("ARTIFACT"), "profile": sub.settings.profile,
                "timeout": min(600, sub.cell_timeout), "memory_mb": max(2048, sub.memory_mb // 2),
                "adapters": sub.assignment.adapters}
        pool = lent.evaluators or default_pool()
        return pool.measure(spec, notebook.parent, sub.settings, sub.gpu, inputs)[spec["name"]]

    return measure


_pool: list = []


def default_pool():
    if not _pool:
        import atexit

        from autograder.evaluators.pool import Pool

        _pool.append(Pool())
        atexit.register(_pool[0].close)
    return _pool[0]


def _intake(sub: Submission, ws: Workspace, result: Result) -> tuple[Path | None, str | None]:
    """The notebook to grade in the course copy (None: nothing gradable) and a wrong-profile line."""
    from autograder.intake.artifacts import check_artifacts
    from autograder.intake.placement import Budget, place_submission
    from autograder.intake.repair import repair

    submitted = ws.submitted(sub.student, sub.assignment.id)
    submitted.parent.mkdir(parents=True, exist_ok=True)
    budget = Budget(sub.assignment.limits.max_submission_mb * 2**20)
    notebook, problem, notes = place_submission(sub.folder, sub.assignment, submitted, budget)
    result.feedback.extend(notes)
    if notebook is None:
        result.status = "missing" if problem.startswith("no notebook") else "invalid"
        result.feedback.append(problem)
        return None, None
    try:
        fixed, repairs = repair(nbformat.read(notebook, as_version=4), sub.release)
    except Exception as error:  # noqa: BLE001 - a notebook so odd it cannot be rebuilt
        result.status = "invalid"
        result.feedback.append(f"{sub.assignment.id}.ipynb could not be read cell by cell ({type(error).__name__})")
        return None, None
    nbformat.write(fixed, notebook)
    result.feedback.extend(repairs)
    notes, mismatch = check_artifacts(submitted, sub.assignment, sub.settings.profile)
    result.feedback.extend(notes)
    from autograder.grading.late import stamp

    # nbgrader's own late-submission machinery (AssignLatePenalties) deducts the penalty: it reads
    # timestamp.txt and the course's due date, set here so that it agrees with result.late
    stamp(ws.course, submitted, sub.assignment.id, result.submitted_at, result.late, sub.settings.deadline)
    return notebook, mismatch


def _run_job(sub: Submission, ws: Workspace, notebook: Path, measurement: dict | None,
             lent: Lent) -> tuple[JobSummary | None, str]:
    """nbgrader autograde + feedback in the workspace: (its summary or None, "" or why the grader killed it:
    "timeout" at the hard limit, "memory" past the job's own memory budget). Measurements a test asks for
    meanwhile are made here, in the grader's process (``grading.measure_on_request``)."""
    from autograder.grading.measure_on_request import Desk
    from autograder.isolation.host_isolation import next_uid

    mounts, cache_env = filesystem.stage_caches(ws.course.parent / ".caches", other_uid=ws.isolation.mode == "root")
    if not ws.isolation.isolated:
        mounts, cache_env = [], {k: v for k, v in _host_cache_env().items()}
    env = kernel_env(sub.settings.profile, ws, sub.gpu, cache_env,
                     threads=sub.settings.kernel_threads)
    spec = sandbox_spec(sub, ws, notebook, env, mounts)
    limit = sub.assignment.limits.notebook_timeout_s
    summary_file = ws.state / "job.json"
    mode = ws.isolation.mode
    settings = JobSettings(state=str(ws.state), summary=str(summary_file), deadline=time.time() + limit,
                           measurement=measurement, feedback_pages=sub.settings.feedback_pages,
                           task_sandbox=mode, task_uid=next_uid() if mode == "root" else None)
    job_env = {"JUPYTER_PATH": str(ws.course / "jupyter"), "JUPYTER_RUNTIME_DIR": str(ws.channel),
               SPEC_VARIABLE: str(spec.write(ws.state)), JOB_VARIABLE: str(settings.write(ws.state))}
    measure = _measure_on_request(sub, ws, notebook, lent)
    with Desk(ws.state, measure) if measure else contextlib.nullcontext():  # a polling thread only where asked
        code, log, over = run_job_process(ws.course, sub.assignment.id, sub.student, job_env, hard_limit(limit),
                                          lent.jobs)
    logs = sub.out / "logs" / sub.student  # for the instructor, never shown to the student
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{sub.assignment.id}.log").write_text(log[-200_000:])
    if over == "memory":
        return None, "memory"
    try:
        summary = JobSummary(**json.loads(summary_file.read_text()))
    except (OSError, ValueError, TypeError):
        summary = None
    return summary, over


def _host_cache_env() -> dict[str, str]:
    return filesystem.cache_env({**filesystem.hf_cache_folders(), **filesystem.data_folders()})


def job_memory_mb() -> int:
    """What the grading job's own process may hold (nbgrader, the judges): a report that asks for more is killed."""
    return int(os.environ.get("COURSE_GRADER_JOB_MB") or JOB_MEMORY_MB)


def run_job_process(course: Path, assignment_id: str, student: str, env: dict, timeout: float,
                    jobs=None) -> tuple[int | None, str, str]:
    """``autograder.grading.job`` as the grader, in a fork of the worker's job server (nbgrader
    already imported) or a fresh subprocess: (exit status, log, ""), or (None, log, "timeout" or "memory")
    when its whole tree was killed past ``timeout`` or past :func:`job_memory_mb`."""
    merged = {**os.environ, **env}
    # nbgrader shells out to `alembic` and `jupyter`: find them next to this interpreter
    merged["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), merged.get("PATH", "")])
    if jobs is not None:
        try:
            return jobs.run(course, assignment_id, student, merged, timeout, job_memory_mb())
        except (RuntimeError, OSError, ValueError):
            pass  # a dead job server: this one runs in its own process
    with tempfile.TemporaryFile("w+", errors="replace") as log:
        proc = subprocess.Popen([sys.executable, "-m", "autograder.grading.job", str(course), assignment_id, student],
                                cwd=course, env=merged, stdout=log, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        code, over = processes.wait_bounded(proc.pid, proc.poll, timeout, job_memory_mb())
        proc.wait()
        log.seek(0)
        return code, log.read(), over


def _gradebook_record(ws: Workspace, sub: Submission) -> dict | None:
    from autograder.reports import gradebook

    try:
        return gradebook.extract(ws.course, sub.assignment.id, sub.student)
    except Exception:  # noqa: BLE001 - a gradebook without this submission: nbgrader gave up early
        return None


def _explain(result: Result, summary: JobSummary | None, tier_ids: set) -> None:
    """One feedback line per lost test: its check's message."""
    messages = summary.messages if summary else {}
    result.cell_messages = {name: msg for name, msg in messages.items()
                            if name in result.cells and result.cells[name][0] < result.cells[name][1]}
    for name, message in result.cell_messages.items():
        if name not in tier_ids:
            result.feedback.append(f"{name}: {message}")


def _keep_for_formgrader(ws: Workspace, sub: Submission) -> None:
    """OUT/submitted and OUT/autograded: the notebooks (not the artifacts) formgrader opens."""
    for kind in ("submitted", "autograded"):
        source = ws.course / kind / sub.student / sub.assignment.id
        target = sub.out / kind / sub.student / sub.assignment.id
        if not source.is_dir():
            continue
        target.mkdir(parents=True, exist_ok=True)
        for name in (f"{sub.assignment.id}.ipynb", "timestamp.txt"):
            if (source / name).is_file():
                shutil.copyfile(source / name, target / name)
