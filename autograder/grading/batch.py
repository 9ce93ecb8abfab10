"""A batch: every submission in SUBMISSIONS graded into OUT, on local workers or a Ray cluster.

``autograde`` checks the layout, decides the profile and the isolation once (and says once when
the host cannot isolate kernels), builds the template course and the tiny model, then grades
each submission with ``grade.grade_one`` on N threads (each runs its own sandboxed kernel and
keeps its own evaluator process) or sends them to Ray (``remote``). One submission's failure is
one ``crashed`` row, never a lost batch. After each result it merges the submission into
``OUT/gradebook.db`` and rewrites ``OUT/grades.csv`` (a killed batch keeps the rows so far); at
the end it adds manual grades from the gradebook and writes ``OUT/lms_grades.csv``. OUT keeps
``source/``, ``release/``, ``submitted/`` and ``autograded/`` so nbgrader's formgrader works there
(see ``manual``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path

from autograder.isolation import sandbox
from autograder.manifest import Assignment
from autograder.authoring.course import prepare_template
from autograder.reports.feedback import all_results, finish, format_table, rewrite_page_summary, write_grades, write_lms_grades, \
    write_result_files
from autograder.grading.submission import grade_one
from autograder.intake.placement import discover, lms_metadata
from autograder.grading.outcome import Result, Settings

__all__ = ["autograde", "format_table", "parse_deadline", "detect_gpus", "resolve_profile"]


def detect_gpus() -> int:
    """CUDA devices on this machine (0 without CUDA); asks torch in a subprocess."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        return 0
    try:
        run = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                             capture_output=True, text=True, timeout=120)
        return int(run.stdout.strip().splitlines()[-1])
    except Exception:
        return 0


def resolve_profile(profile: str, gpus: int) -> str:
    return ("full" if gpus else "tiny") if profile == "auto" else profile


def parse_deadline(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _bare_template(assignments: list[Assignment], scratch: Path) -> Path:
    """Just enough of a course for ``no-gpu`` results: each release's cells (for the points)."""
    import shutil

    template = scratch / "bare"
    for assignment in assignments:
        target = template / "release" / assignment.id / f"{assignment.id}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(assignment.source, target)
    return template


def needs_tiny_model(assignment: Assignment) -> bool:
    return assignment.uses_tiny_model or assignment.evaluator is not None


def prebuild_models(assignments: list[Assignment], profile: str, log=None) -> None:
    """Kernels see the kit read-only: check once, before grading, that the shipped tiny model is
    intact (a broken one would otherwise cost every submission its model-based checks)."""
    if profile != "tiny" or not any(needs_tiny_model(a) for a in assignments):
        return
    run = subprocess.run([sys.executable, "-c", "from helpers import lm; print(lm.resolve_model('tiny', 'unused'))"],
                         capture_output=True, text=True)
    if run.returncode != 0 and log:
        log(f"warning: the tiny model is not usable ({(run.stderr.strip().splitlines() or ['?'])[-1]})")


def autograde(submissions: Path, out: Path, assignments: list[Assignment], workers: int = 1,
              profile: str = "tiny", *, deadline: datetime | str | None = None, late_penalty: float = 0.0,
              memory_mb: int | None = None, timeout: int | None = None, ray_address: str | None = None,
              guard: bool = True, sandbox_mode: str | None = None, log=None) -> list[Result]:
    """Grade every submission; write OUT/grades.csv, OUT/gradebook.db and OUT/feedback/<student>/<assignment>/."""
    from autograder.reports import gradebook
    from autograder.reports import manual

    by_id = {a.id: a for a in assignments}
    jobs = discover(Path(submissions), list(by_id))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if isinstance(deadline, str):
        deadline = parse_deadline(deadline)
    needed = [by_id[name] for name in dict.fromkeys(job[1] for job in jobs)]
    gpus = 0
    if ray_address is None and (profile in ("auto", "full")) and any(a.gpu_needed("full") for a in needed):
        gpus = detect_gpus()
    lms = lms_metadata(Path(submissions))
    requested = sandbox_mode or os.environ.get("AUTOGRADER_SANDBOX") or "auto"
    settings = Settings(profile=resolve_profile(profile, gpus), deadline=deadline, late_penalty=late_penalty,
                        memory_mb=memory_mb, timeout=timeout, guard=guard, gpus=gpus, sandbox=requested, lms=lms)
    from autograder.evaluators import declared as declared_evaluator

    for assignment in needed:  # a tier table without this profile stops the batch here, not per student
        declared_evaluator(assignment, settings.profile)
    isolation = sandbox.probe(requested)  # SandboxError when "required" and unavailable
    if log:
        if isolation.isolated:
            log(f"kernel isolation: {isolation.describe()} (own PID/mount/network namespaces, a copy of the "
                "submission only)")
        else:
            log(f"kernel isolation unavailable here ({isolation.reason}): grading with the in-kernel guards only; "
                "a notebook can read what this user can read. See docs/GRADING.md.")
    if lms:
        (out / "lms.json").write_text(json.dumps(lms, indent=2))
    prebuild_models(needed, settings.profile, log)
    if isolation.mode == "root":  # kernels and evaluators read the model caches as other uids
        sandbox.open_caches_for_sandbox_users()

    results: list[Result] = []
    progress: dict = {}
    write_lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        os.chmod(scratch, 0o700)  # course copies hold the solutions: the grader's eyes only
        if ray_address is None and settings.profile == "full" and not settings.gpus and all(
                a.gpu_needed("full") for a in needed):
            template = _bare_template(needed, Path(scratch))  # nothing will run: releases only
        else:
            template = prepare_template(needed, Path(scratch))
            manual.prepare_out(out, template, needed)
        duedate = deadline.astimezone(timezone.utc).replace(tzinfo=None) if deadline is not None else None

        def record(result: Result, rec) -> Result:
            if result.late:
                if settings.late_penalty:
                    deducted = round(result.score * settings.late_penalty, 6)
                    result.score -= deducted
                    result.feedback.append(f"late (submitted {result.submitted_at or 'after the deadline'}, per "
                                           f"{result.timestamp_source}): {settings.late_penalty:.0%} deducted "
                                           f"({deducted:g} points)")
                else:
                    result.feedback.append(f"late: submitted {result.submitted_at or 'after the deadline'} (per "
                                           f"{result.timestamp_source}), marked only, nothing deducted")
            try:
                if (template / "gradebook.db").exists():
                    gradebook.merge(out, template / "gradebook.db", result.assignment, result.student, rec,
                                    duedate)
            except Exception as error:  # the gradebook is a convenience; grades.csv is the record
                result.feedback.append(f"(grader) gradebook not updated: {type(error).__name__}: {error}"[:300])
            manual.attach_manual(out, [result])
            write_result_files(result, out)
            rewrite_page_summary(result, out)
            with write_lock:  # a killed batch keeps every row finished so far
                progress[(result.student, result.assignment)] = result
                write_grades(all_results(out, list(progress.values())), out / "grades.csv")
            if log:
                log(f"  {result.student}/{result.assignment}: {result.score:g}/{result.max_score:g} {result.status}")
            return result

        if ray_address is not None:
            from autograder.grading.ray_runner import grade_on_ray

            for result, rec in grade_on_ray(jobs, by_id, settings, ray_address, out):
                results.append(record(result, rec))
        else:
            from autograder.evaluators import Pool

            pool = Pool()
            workdir = Path(scratch) / "work"
            workdir.mkdir()
            os.chmod(workdir, 0o700)
            visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
            gpu_slots = (visible or [str(i) for i in range(settings.gpus)])[: settings.gpus]
            slot_lock = threading.Condition()
            local = threading.local()
            servers: list = []

            def job_server():
                """One per worker thread: nbgrader imported once, each submission in a fork."""
                from autograder.grading.jobserver import JobServer

                server = getattr(local, "server", None)
                if server is None or not server.alive:
                    try:
                        server = JobServer()
                        servers.append(server)
                    except Exception:  # noqa: BLE001 - grading falls back to one process per job
                        server = None
                    local.server = server
                return server

            def run(job):
                student, assignment_id, folder = job
                assignment = by_id[assignment_id]
                gpu = None
                wants_gpu = assignment.gpu_needed(settings.profile) and settings.gpus > 0
                started = time.perf_counter()
                try:
                    if wants_gpu:
                        with slot_lock:
                            slot_lock.wait_for(lambda: gpu_slots)
                            gpu = gpu_slots.pop()
                    result = grade_one(template, workdir, student, assignment, folder, out, settings=settings,
                                       gpu=gpu, evaluators=pool, jobs=job_server())
                except Exception as error:  # never lose the batch to one submission
                    result = Result(student, assignment_id, status="crashed",
                                    feedback=[f"grader error: {type(error).__name__}: {error}"[:400]])
                    result = finish(result, out, started, None)
                finally:
                    if gpu is not None:
                        with slot_lock:
                            gpu_slots.append(gpu)
                            slot_lock.notify()
                return result

            try:
                with ThreadPoolExecutor(max_workers=max(1, workers)) as executor:
                    futures = {executor.submit(run, job): i for i, job in enumerate(jobs)}
                    ordered: dict[int, Result] = {}
                    for future in as_completed(futures):
                        result = future.result()
                        ordered[futures[future]] = record(result, getattr(result, "_record", None))
                    results = [ordered[i] for i in range(len(jobs))]
            finally:
                pool.close()
                for server in servers:
                    server.close()
    results.sort(key=lambda r: (r.student, r.assignment))
    everything = all_results(out, results)
    manual.attach_manual(out, everything)
    write_grades(everything, out / "grades.csv")
    write_lms_grades(everything, manual.load_lms(out), out / "lms_grades.csv")
    return results
