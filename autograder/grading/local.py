"""Grading a batch on this machine: N worker threads, each with its own job server (nbgrader
imported once) and evaluator processes, GPUs handed out one submission at a time.

A worker thread only waits: the work happens in the processes it starts (the job, its sandboxed
kernel, the evaluator), so N threads use N cores. One submission's failure is one ``crashed``
outcome, never a lost batch.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autograder.grading.submission import Lent, grade_one
from autograder.outcome import Outcome, Result, Settings
from autograder.reports.feedback import finish
from autograder.reports.scrub import Scrubber


class GpuSlots:
    """The GPUs this grader may use (CUDA_VISIBLE_DEVICES, else all it found), lent one at a time."""

    def __init__(self, gpus: int):
        visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
        self.free = (visible or [str(i) for i in range(gpus)])[:gpus]
        self.condition = threading.Condition()

    def take(self) -> str:
        with self.condition:
            self.condition.wait_for(lambda: self.free)
            return self.free.pop()

    def give(self, gpu: str) -> None:
        with self.condition:
            self.free.append(gpu)
            self.condition.notify()


class LocalRunner:
    def __init__(self, template: Path, workdir: Path, out: Path, settings: Settings, by_id: dict, scratch: Path):
        from autograder.evaluators.pool import Pool

        self.template, self.workdir, self.out, self.settings, self.by_id = template, workdir, out, settings, by_id
        self.pool = Pool(scratch / "evaluator-caches")
        self.gpus = GpuSlots(settings.gpus)
        self.local = threading.local()
        self.servers: list = []

    def _job_server(self):
        """One per worker thread: nbgrader imported once, each submission in a fork."""
        from autograder.grading.jobserver import JobServer

        server = getattr(self.local, "server", None)
        if server is None or not server.alive:
            try:
                server = JobServer()
                self.servers.append(server)
            except Exception:  # noqa: BLE001 - grading falls back to one process per job
                server = None
            self.local.server = server
        return server

    def grade(self, job) -> Outcome:
        student, assignment_id, folder = job
        assignment = self.by_id[assignment_id]
        gpu = None
        started = time.perf_counter()
        try:
            if assignment.gpu_needed(self.settings.profile) and self.settings.gpus > 0:
                gpu = self.gpus.take()
            return grade_one(self.template, self.workdir, (student, assignment, folder), self.out, self.settings,
                             Lent(gpu=gpu, evaluators=self.pool, jobs=self._job_server()))
        except Exception as error:  # noqa: BLE001 - never lose the batch to one submission
            result = Result(student, assignment_id, status="crashed",
                            feedback=[f"grader error: {type(error).__name__}: {error}"[:400]])
            return Outcome(finish(result, self.out, started, None, scrub=Scrubber(set())))
        finally:
            if gpu is not None:
                self.gpus.give(gpu)

    def run(self, jobs: list, workers: int, record, log=None) -> list[Result]:
        """Grade every job on ``workers`` threads; ``record`` each outcome as it arrives. The batch's
        adapters are measured in groups first (``grading.measure_ahead``): grading finds the answers."""
        from autograder.grading.measure_ahead import measure_ahead

        try:
            measure_ahead(self, jobs, workers, log)
            with ThreadPoolExecutor(max_workers=max(1, workers)) as executor:
                futures = {executor.submit(self.grade, job): i for i, job in enumerate(jobs)}
                ordered: dict[int, Result] = {}
                for future in as_completed(futures):
                    ordered[futures[future]] = record(future.result())
            return [ordered[i] for i in range(len(jobs))]
        finally:
            self.pool.close()
            for server in self.servers:
                server.close()
