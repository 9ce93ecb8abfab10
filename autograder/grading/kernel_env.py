"""The grading kernel's environment and sandbox: what it is told, what it may see.

The kernel's whole environment comes from :func:`kernel_env` (allowlisted by the launcher on top
of the sandbox basics); it never holds a grader measurement or anything of the grader's own
environment. :func:`sandbox_spec` describes the kernel's sandbox: its copy of the submission, the
model caches, its limits.
"""
from __future__ import annotations

import os

from autograder.isolation.environment import inside_path
from autograder.isolation.spec import HOME, Spec

KERNEL_MARK = "AUTOGRADER_KERNEL_MARK"


def thread_env(threads: int) -> dict[str, str]:
    """Intra-op threads for torch, numpy and the BLAS under them (0: their default, one per core).

    Several kernels on one machine each start one thread per core; on 2 cores two kernels then
    run 4 spinning threads, and the tiny model's small matrix products took twice as long as
    with one thread each (same results: the products do not split their sums across threads)."""
    if threads <= 0:
        return {}
    return {name: str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def threads_per_job(jobs: int) -> int:
    """Cores per concurrent job (0 when one job has the machine: keep the default)."""
    return 0 if jobs <= 1 else max(1, (os.cpu_count() or 1) // jobs)


def kernel_env(profile: str, workspace, gpu: str | None, cache_env: dict[str, str],
               threads: int = 0) -> dict[str, str]:
    """What the kernel is told: profile, offline flags, caches, threads (its limits come from the spec)."""
    channel = str(workspace.channel)

    def here(path) -> str:  # channel paths as the kernel sees them
        return inside_path(str(path), channel) if workspace.isolation.isolated else str(path)

    return {
        "COURSE_PROFILE": profile, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg",
        "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1", "NBGRADER_EXECUTION": "autograde",
        # nbgrader scores a test cell 0 when anything reaches stderr: keep library warnings and
        # progress bars (model loading inside hidden tests) from costing a student points
        "PYTHONWARNINGS": "ignore", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
        "TQDM_DISABLE": "1",
        # a mark, not a setting: the kernel's processes carry it, so the grader finds what an unsandboxed
        # kernel left behind (its limits come from the spec, through the launcher's options)
        KERNEL_MARK: here(workspace.kernel_state),
        "CUDA_VISIBLE_DEVICES": gpu if gpu is not None else "",
        **thread_env(threads),
        **cache_env,
    }


def sandbox_spec(sub, workspace, notebook, env: dict, mounts: list) -> Spec:
    """What the sandbox gives the kernel that grades ``sub`` (a ``grading.submission.Submission``)."""
    assignment, gpu, memory_mb = sub.assignment, sub.gpu, sub.memory_mb
    return Spec(mode=workspace.isolation.mode, channel=str(workspace.channel), uid=workspace.uid or 0,
                disk_mb=assignment.limits.disk_mb, memory_mb=memory_mb, workdir=f"{HOME}/{assignment.id}",
                work_from=str(notebook.parent), notebooks=(str(notebook),), mounts=tuple(mounts), gpu=gpu is not None,
                env=env)
