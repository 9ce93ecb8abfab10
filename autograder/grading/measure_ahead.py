"""Measuring a batch's adapters in groups, before their submissions are graded.

A GPU decoding one student's 60 held-out prompts is mostly idle; decoding eight students' at once
(one row per prompt and adapter, each row through its own adapter: peft's mixed-adapter batch)
costs little more than one. So before grading, each submission is placed as intake will place it
(the same function and budget, hence the same bytes), its artifact is found, and the artifacts are
measured in groups of the evaluator's ``GROUP_SIZES``, each group placed in its own private scratch
folder, removed once measured. Each answer lands in the pool's cache, keyed by the artifact's
bytes, where the submission's own measurement finds it.

Nothing else changes, which is what keeps it safe: an artifact not measured here (refused, a
group that failed, or one after which the shared base model was not intact) is measured alone
when its submission is graded, as before. This only ever saves time.
"""
from __future__ import annotations

import contextlib
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def placed_artifacts(jobs: list, assignment, artifact: str, scratch: Path) -> list[Path]:
    """The ``artifact`` folder of each of ``jobs`` (submissions of ``assignment``), placed under
    ``scratch`` as intake would place it; a submission without one is left out."""
    from autograder.intake.placement import Budget, place_submission

    found = []
    for n, (_student, _assignment_id, folder) in enumerate(jobs):
        try:
            budget = Budget(assignment.limits.max_submission_mb * 2**20)
            notebook, _problem, _notes = place_submission(Path(folder), assignment, scratch / str(n) / "s", budget)
        except Exception:  # noqa: BLE001 - whatever went wrong, intake will say it for this submission
            continue
        placed = notebook.parent / artifact if notebook is not None else None
        if placed is not None and placed.is_dir() and not placed.is_symlink():
            found.append(placed)
    return found


def groups(items: list, size: int) -> list[list]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def grouped_spec(assignment, profile: str) -> dict | None:
    """The assignment's evaluator when it measures adapters in groups (``GROUP_SIZES``), else None."""
    from autograder import evaluators

    spec = evaluators.declared(assignment, profile)
    return spec if spec and spec["name"] in evaluators.GROUP_SIZES else None


def job_groups(jobs: list, by_id: dict, profile: str) -> list[tuple]:
    """(assignment, jobs) per group to measure ahead: the jobs of each assignment whose evaluator
    measures in groups, when it has more than one."""
    from autograder import evaluators

    found = []
    for assignment_id in dict.fromkeys(job[1] for job in jobs):
        spec = grouped_spec(by_id[assignment_id], profile)
        mine = [job for job in jobs if job[1] == assignment_id]
        if spec is not None and len(mine) > 1:
            found += [(by_id[assignment_id], group) for group in groups(mine, evaluators.GROUP_SIZES[spec["name"]])]
    return found


def measure_jobs(pool, assignment, jobs: list, settings, gpu) -> int:
    """Measure one group of ``jobs`` (all of ``assignment``) on ``pool``: how many answers were kept.
    ``gpu``: a context manager giving the GPU to measure on (or None), entered once the group is placed."""
    spec = grouped_spec(assignment, settings.profile)
    if spec is None:
        return 0
    with tempfile.TemporaryDirectory(prefix="ahead-") as scratch:
        artifacts = placed_artifacts(jobs, assignment, spec["artifact"], Path(scratch))
        if not artifacts:
            return 0
        with gpu as lent:
            return pool.measure_ahead(spec, artifacts, settings, lent)


def measure_ahead(runner, jobs: list, workers: int, log=None) -> int:
    """Measure the adapters of ``jobs`` in groups on ``runner``'s pool and GPUs (``workers`` groups at
    a time, each placed in its own scratch folder); how many answers were kept."""
    from tqdm.auto import tqdm

    profile, gpus = runner.settings.profile, runner.settings.gpus
    # without a GPU, a submission that needs one is graded no-gpu, unmeasured: measure none of them
    work = [(a, group) for a, group in job_groups(jobs, runner.by_id, profile) if gpus or not a.gpu_needed(profile)]
    if not work:
        return 0
    started = time.perf_counter()
    kept = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as executor, \
            tqdm(total=len(work), desc="adapters measured ahead", unit="group", disable=log is None) as progress:
        for count in executor.map(lambda item: _measure_group(runner, *item), work):
            kept += count
            progress.update(1)
    if log:
        total = sum(len(group) for _, group in work)
        log(f"measured {kept} of {total} adapters ahead, in {len(work)} groups, in "
            f"{time.perf_counter() - started:.0f} s (the rest are measured with their submission)")
    return kept


def _measure_group(runner, assignment, group: list) -> int:
    try:
        return measure_jobs(runner.pool, assignment, group, runner.settings, _lent_gpu(runner, assignment))
    except Exception:  # noqa: BLE001 - this group is measured submission by submission instead
        return 0


@contextlib.contextmanager
def _lent_gpu(runner, assignment):
    """One of the runner's GPUs while the group is measured (None when the assignment needs none)."""
    if not (assignment.gpu_needed(runner.settings.profile) and runner.settings.gpus > 0):
        yield None
        return
    gpu = runner.gpus.take()
    try:
        yield gpu
    finally:
        runner.gpus.give(gpu)
