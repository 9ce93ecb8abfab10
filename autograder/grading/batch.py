"""A batch: every submission in SUBMISSIONS graded into OUT, on local workers or a Ray cluster.

:func:`autograde` plans once -- the layout, the profile, the GPUs, the isolation (saying once
when the host cannot isolate kernels), the evaluators' tier tables, the template course -- then
hands the submissions to a runner (``grading.local`` or ``grading.ray_runner``) and records each
outcome as it arrives and writes ``OUT/lms_grades.csv`` at the end (``grading.record``, the one place
that reports). OUT keeps ``source/``, ``release/``, ``submitted/``
and ``autograded/`` so nbgrader's formgrader works there (see ``reports.grades``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from autograder.grading.record import Recorder
from autograder.manifest import Assignment
from autograder.outcome import Request, Result, Settings
from helpers import profiles


def detect_gpus() -> int:
    """CUDA devices on this machine (0 without CUDA); asks torch in a subprocess."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        return 0
    try:
        run = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                             capture_output=True, text=True, timeout=120)
        return int(run.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001 - no torch, no CUDA: no GPU
        return 0


def parse_deadline(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def check_models(assignments: list[Assignment], profile: str, log=None) -> None:
    """Kernels see the kit and its model cache read-only: check once, before grading, that the profile's
    local model is usable (the shipped tiny model intact; the small profile's SmolLM2 converted into the
    kit's cache, which takes about 20 s the first time), since a broken one would otherwise cost every
    submission its model-based checks."""
    if profile not in ("tiny", "small") or not any(a.uses_tiny_model or a.evaluator for a in assignments):
        return
    code = f"from helpers import lm; print(lm.resolve_model({profile!r}, 'unused'))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if run.returncode != 0 and log:
        log(f"warning: the {profile} profile's model is not usable ({(run.stderr.strip().splitlines() or ['?'])[-1]})")


def plan(submissions: Path, out: Path, assignments: list[Assignment], request: Request,
         log=None) -> tuple[list, dict, Settings]:
    """(jobs, assignments by id, settings): everything decided once, before any kernel starts."""
    from autograder import evaluators
    from autograder.grading.kernel_env import threads_per_job
    from autograder.intake.placement import discover, lms_metadata
    from autograder.isolation.host_isolation import probe

    by_id = {a.id: a for a in assignments}
    jobs = discover(Path(submissions), list(by_id))
    regrades = {}
    if request.only:
        jobs, regrades = _only(jobs, Path(out), request.only)
    needed = [by_id[name] for name in dict.fromkeys(job[1] for job in jobs)]
    gpus = detect_gpus() if request.ray_address is None and request.profile in ("auto", "full") and any(
        a.gpu_needed("full") for a in needed) else 0
    requested = request.sandbox_mode or os.environ.get("AUTOGRADER_SANDBOX") or "auto"
    deadline = parse_deadline(request.deadline) if isinstance(request.deadline, str) else request.deadline
    settings = Settings(profile=profiles.resolve(request.profile, gpus > 0), deadline=deadline,
                        late_penalty=request.late_penalty, memory_mb=request.memory_mb, timeout=request.timeout,
                        gpus=gpus, sandbox=requested, lms=lms_metadata(Path(submissions)),
                        feedback_pages=request.feedback_pages, extensions=dict(request.extensions),
                        regrades=regrades,
                        # local kernels graded side by side share the cores; a Ray node sizes its own
                        kernel_threads=threads_per_job(min(max(1, request.workers), len(jobs)))
                        if request.ray_address is None and jobs else 0)
    for assignment in needed:  # an evaluator unknown to this grader stops the batch here, not per student
        if not assignment.runs_in(settings.profile):
            raise ValueError(f"{assignment.id} has no {settings.profile} profile (it runs in: "
                             f"{', '.join(assignment.needs_gpu)}): grade it with --profile set to one of those")
        evaluators.declared(assignment, settings.profile)
    isolation = probe(requested)  # SandboxError when "required" and unavailable
    if log:
        log(f"kernel isolation: {isolation.describe()} (own PID/mount/network namespaces, a copy of the submission "
            "only)" if isolation.isolated else
            f"kernel isolation unavailable here ({isolation.reason}): a notebook can read what this user can read "
            "(the hidden tests' expected values included) and forge its observations; grade on a host with "
            "bubblewrap for marks that count. See docs/GRADING.md.")
    if settings.lms:
        (Path(out) / "lms.json").write_text(json.dumps(settings.lms, indent=2))
    check_models(needed, settings.profile, log)
    return jobs, by_id, settings


def _only(jobs: list, out: Path, students: tuple) -> tuple[list, dict]:
    """(the jobs of ``students``, {"student/assignment": their earlier autograded score}); ValueError (one line) for
    an OUT never graded or a student with no submission."""
    from autograder.reports.feedback import load_results

    earlier = load_results(out)
    if not earlier:
        raise ValueError(f"--only regrades students in an OUT graded before, and {out} holds no results: run "
                         "`python -m autograder autograde` without --only first")
    missing = sorted(set(students) - {job[0] for job in jobs})
    if missing:
        raise ValueError(f"--only {' '.join(missing)}: no submission of theirs in SUBMISSIONS (student folders: "
                         f"{', '.join(sorted({job[0] for job in jobs})[:20])})")
    return ([job for job in jobs if job[0] in students],
            {f"{r.student}/{r.assignment}": r.score for r in earlier if r.student in students})


def _template(needed: list[Assignment], settings: Settings, ray: bool, scratch: Path, out: Path) -> Path:
    from autograder.authoring.course import prepare_template
    from autograder.reports import grades

    if not ray and settings.profile == "full" and not settings.gpus and all(a.gpu_needed("full") for a in needed):
        template = scratch / "bare"  # nothing will run (no-gpu results): each release's cells, for the points
        for assignment in needed:
            target = template / "release" / assignment.id / f"{assignment.id}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(assignment.source.read_bytes())
        return template
    template = prepare_template(needed, scratch)
    grades.prepare_out(out, template, needed)
    return template


def autograde(submissions: Path, out: Path, assignments: list[Assignment], request: Request | None = None,
              log=None) -> list[Result]:
    """Grade every submission as ``request`` asks; write OUT/grades.csv, OUT/gradebook.db and
    OUT/feedback/<student>/<assignment>/."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    request = request or Request()
    jobs, by_id, settings = plan(submissions, out, assignments, request, log)
    needed = [by_id[name] for name in dict.fromkeys(job[1] for job in jobs)]
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        scratch = Path(scratch)
        os.chmod(scratch, 0o700)  # course copies hold the solutions: the grader's eyes only
        template = _template(needed, settings, request.ray_address is not None, scratch, out)
        record = Recorder(out, template, settings, log)
        if request.ray_address is not None:
            from autograder.grading.ray_runner import grade_on_ray

            results = [record(outcome) for outcome in grade_on_ray(jobs, by_id, settings, request.ray_address, out)]
        else:
            from autograder.grading.local import LocalRunner

            workdir = scratch / "work"
            workdir.mkdir(mode=0o700)
            runner = LocalRunner(template, workdir, out, settings, by_id, scratch)
            results = runner.run(jobs, request.workers, record, log)
    results.sort(key=lambda r: (r.student, r.assignment))
    record.finish(results)
    return results
