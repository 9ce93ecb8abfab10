"""``autograde --ray ADDRESS``: grade submissions as Ray tasks on an existing cluster.

Each task receives the assignment's source folder and the submission as bytes (so workers need
no shared filesystem, only this kit installed), builds its own template course once per worker
process, grades with the same ``grading.submission.grade_one`` as local grading (sandboxed kernel, one
evaluator process per worker kept across tasks), and returns the Result, the gradebook record
and the feedback files. This module imports ``submission`` and ``course``, never ``batch``. GPU
assignments ask Ray for one GPU per task. Adapters an evaluator measures in groups are measured
first, a group per task (:func:`measure_task`, see ``grading.measure_ahead``), and every grading
task starts from those answers. ``ADDRESS`` is anything ``ray.init`` accepts (``auto``, ``ray://host:10001``,
``local`` for a throwaway instance on this machine, which is what the tests use).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from autograder.outcome import Outcome, Result
from autograder.reports.feedback import finish
from autograder.reports.scrub import Scrubber

_templates: dict = {}


def pack(folder: Path) -> bytes:
    """Regular files and folders only (links, FIFOs and devices stay behind; intake notes them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(str(folder), arcname=".", filter=lambda info: info if info.isreg() or info.isdir() else None)
    return buffer.getvalue()


def unpack(data: bytes, target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:  # Python 3.11.0-3.11.3 (Debian 12's 3.11.2) has no extraction filters
            tar.extractall(target, members=_plain_members(tar, target))
    return target


def _plain_members(tar: tarfile.TarFile, target: Path) -> list[tarfile.TarInfo]:
    """Regular files and folders that land inside ``target`` (what ``pack`` writes), else an error."""
    root = target.resolve()
    members = []
    for member in tar.getmembers():
        where = (root / member.name).resolve()
        if not (member.isreg() or member.isdir()) or (where != root and root not in where.parents):
            raise ValueError(f"refusing {member.name!r} in a packed folder: only files and folders inside it")
        member.mode &= 0o755  # no set-uid/set-gid bits, as the "data" filter does
        members.append(member)
    return members


def _template_for(assignment, source_bytes: bytes, key: str) -> Path:
    """One template course per (assignment, source) per worker process."""
    from autograder.authoring.course import prepare_template

    if key not in _templates:
        root = Path(tempfile.mkdtemp(prefix="ray-template-"))
        source_dir = unpack(source_bytes, root / "solutions" / assignment.id)
        local = replace(assignment, source=source_dir / f"{assignment.id}.ipynb")
        _templates[key] = (prepare_template([local], root), local)
    return _templates[key]


def _task_gpu(assignment, settings) -> str | None:
    """The GPU Ray gave this task (through CUDA_VISIBLE_DEVICES), when the assignment needs one."""
    if not assignment.gpu_needed(settings.profile):
        return None
    try:
        import ray

        ids = ray.get_gpu_ids()
        return ",".join(str(int(g)) for g in ids) if ids else None
    except Exception:
        return None


def grade_task(assignment, source_bytes: bytes, student: str, submission: bytes, settings, known=None):
    """Runs on a Ray worker: returns (Result, gradebook record, feedback tarball). ``known``: the
    measurements made ahead (:func:`measure_task`)."""
    from autograder.grading.submission import Lent, default_pool, grade_one

    key = f"{assignment.id}-{hashlib.blake2b(source_bytes, digest_size=16).hexdigest()}"
    template, local = _template_for(assignment, source_bytes, key)
    if known:
        default_pool().learn(known)
    with tempfile.TemporaryDirectory(prefix="ray-grade-") as scratch:
        scratch = Path(scratch)
        folder = unpack(submission, scratch / "submission" / student / assignment.id)
        out = scratch / "out"
        work = scratch / "work"
        work.mkdir()
        os.chmod(work, 0o700)
        os.chmod(scratch, 0o700)
        outcome = grade_one(template, work, (student, local, folder), out, settings,
                            Lent(gpu=_task_gpu(assignment, settings)))
        return outcome.result, outcome.record, pack(out)


def measure_task(assignment, submissions: list[tuple[str, bytes]], settings) -> dict:
    """Runs on a Ray worker: one group of (student, packed submission) measured together
    (``grading.measure_ahead``); returns the pool's kept answers for the grading tasks."""
    from autograder.grading.measure_ahead import measure_jobs
    from autograder.grading.submission import default_pool

    with tempfile.TemporaryDirectory(prefix="ray-ahead-") as scratch:
        os.chmod(scratch, 0o700)
        jobs = [(student, assignment.id, unpack(data, Path(scratch) / student / assignment.id))
                for student, data in submissions]
        pool = default_pool()
        measure_jobs(pool, assignment, jobs, settings, contextlib.nullcontext(_task_gpu(assignment, settings)))
        return pool.known()


def _measured_ahead(ray, jobs, by_id: dict, settings) -> dict:
    """Every group's kept answers, measured on the cluster before grading starts (empty when none)."""
    from autograder.grading.measure_ahead import job_groups

    task = ray.remote(measure_task)
    refs = []
    for assignment, group in job_groups(jobs, by_id, settings.profile):
        options = {"num_gpus": 1} if assignment.gpu_needed(settings.profile) else {"num_cpus": 1}
        refs.append(task.options(**options).remote(assignment, [(s, pack(f)) for s, _, f in group], settings))
    known: dict = {}
    for ref in refs:
        try:
            known.update(ray.get(ref))
        except Exception:  # noqa: BLE001 - that group is measured submission by submission instead
            pass
    return known


def start_local_ray(ray, attempts: int = 3) -> None:
    """A one-machine Ray cluster. Ray gives its raylet a fixed 30 s to register with the GCS; on
    busy cores that is sometimes not enough ("The current node timed out during startup"), so a
    failed start is shut down and tried again before the batch gives up."""
    import psutil

    me = psutil.Process()
    for attempt in range(1, attempts + 1):
        before = {child.pid for child in me.children(recursive=True)}
        try:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            return
        except Exception as error:  # noqa: BLE001 - Ray raises a bare Exception for this
            if "timed out during startup" not in str(error) or attempt == attempts:
                raise
            ray.shutdown()
            # the half-started cluster (GCS, raylet) is not known to ray.shutdown: end what this
            # attempt started, and nothing else
            for child in me.children(recursive=True):
                if child.pid not in before:
                    try:
                        child.kill()
                    except psutil.Error:
                        pass


def grade_on_ray(jobs, by_id: dict, settings, address: str, out: Path):
    """Yield an Outcome as each task finishes; feedback files are written under ``out``."""
    import ray

    started_here = False
    if not ray.is_initialized():
        if address in ("local", "local:"):
            start_local_ray(ray)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        started_here = True
    try:
        task = ray.remote(grade_task)
        known = ray.put(_measured_ahead(ray, jobs, by_id, settings))
        sources = {}
        for assignment_id in dict.fromkeys(job[1] for job in jobs):
            assignment = by_id[assignment_id]
            data = pack(assignment.source.parent)
            sources[assignment_id] = ray.put(data)
        pending = {}
        for student, assignment_id, folder in jobs:
            assignment = by_id[assignment_id]
            wants_gpu = assignment.gpu_needed(settings.profile)
            options = {"num_gpus": 1} if wants_gpu else {"num_cpus": 1}
            ref = task.options(**options).remote(assignment, sources[assignment_id], student, pack(folder), settings,
                                                 known)
            pending[ref] = (student, assignment_id)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            student, assignment_id = pending.pop(done[0])
            try:
                result, record, files = ray.get(done[0])
                unpack(files, Path(out))
                yield Outcome(result, record)
            except Exception as error:  # noqa: BLE001 - a lost worker costs this submission only
                result = Result(student, assignment_id, status="crashed",
                                feedback=[f"grader error on the Ray cluster: {type(error).__name__}: {error}"[:400]])
                yield Outcome(finish(result, Path(out), time.perf_counter(), None, scrub=Scrubber(set())))
    finally:
        if started_here:
            ray.shutdown()
