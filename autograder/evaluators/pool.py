"""Long-lived evaluator processes, one per (evaluator, profile, GPU, isolation) and grading worker.

Each :class:`EvaluatorProcess` runs ``autograder.evaluators.worker`` in a sandbox like a kernel's
(its own uid in root mode, no network, no view of other submissions or the course source; it
imports ``autograder.kernel`` and ``autograder.evaluators`` only). The grader copies one
submission's artifact into the process's inbox (its channel folder, ``/run/kernel/inbox/<n>``
inside), after checking it against the manifest's adapter rules, and reads one JSON line back.
A process that died or answered nonsense is replaced once (a group's request is not retried: its
members are measured alone instead); one that is too slow is not retried.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder.isolation import filesystem, processes
from autograder.isolation.environment import inside_path
from autograder.isolation.host_isolation import next_uid
from autograder.isolation.launcher import LAUNCH_BOOT
from autograder.isolation.spec import HOME, Spec

WORKER_PARTS = ("kernel", "evaluators", "manifest.py", "variants.py", "points.py")
"""What of ``autograder/`` an evaluator worker sees: its own package and what ``manifest`` imports."""
WORKER_BOOT = ("import sys; del sys.path[0]; from autograder.evaluators.worker import main; "
               "sys.exit(main(sys.argv[1:]))")


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """How an evaluator's sandbox starts: the isolation mode, a scratch folder for its caches, and the
    uid a process forked from the grader was given (None: take the next one)."""
    mode: str
    scratch: Path
    uid: int | None = None


class EvaluatorProcess:
    """One sandboxed worker that keeps its base model loaded."""

    def __init__(self, name: str, profile: str, gpu: str | None, memory_mb: int, sandbox: Sandbox):
        mode, scratch, uid = sandbox.mode, sandbox.scratch, sandbox.uid
        self.channel = Path(tempfile.mkdtemp(prefix="age-", dir="/tmp" if len(tempfile.gettempdir()) > 40 else None))
        (self.channel / "inbox").mkdir()
        self.count, self.mode = 0, mode
        # a process forked from the grader passes a uid the grader gave it (its own counter would repeat them)
        self.uid = (uid or next_uid()) if mode == "root" else None
        if self.uid is not None:
            for path in (self.channel, self.channel / "inbox"):
                os.chown(path, self.uid, self.uid)
        mounts, cache_env = filesystem.stage_caches(scratch, other_uid=mode == "root")
        env = {"COURSE_PROFILE": profile, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false", "PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error",
               "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1", "PYTHONUNBUFFERED": "1",
               "CUDA_VISIBLE_DEVICES": gpu if gpu is not None else "",
               **(cache_env if mode in ("root", "user") else _host_caches())}
        argv = [sys.executable, "-c", WORKER_BOOT, name, profile]
        spec = Spec(mode=mode, channel=str(self.channel), uid=self.uid or 0, disk_mb=512, memory_mb=memory_mb,
                    workdir=f"{HOME}/evaluator", mounts=tuple(mounts), gpu=gpu is not None,
                    autograder_parts=WORKER_PARTS, env=env, argv=argv)
        self.spec_dir = Path(tempfile.mkdtemp(prefix="ags-"))
        command = [sys.executable, "-I", "-c", LAUNCH_BOOT, "--spec", str(spec.write(self.spec_dir))]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.spec_dir / "stderr.log", "wb"), text=True, cwd="/",
                                     start_new_session=True)
        self.ready = self._read(600)

    def _read(self, timeout: float) -> dict:
        result: dict = {}

        def read():
            line = self.proc.stdout.readline()
            if line:
                try:
                    result.update(json.loads(line))
                except ValueError:
                    result["error"] = f"evaluator answered {line[:200]!r}"

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self.close()
            return {"error": f"the evaluator did not answer within {timeout:.0f} s"}
        if not result:
            return {"error": "the evaluator stopped: " + self.stderr_tail()}
        return result

    def stderr_tail(self) -> str:
        try:
            lines = (self.spec_dir / "stderr.log").read_text(errors="replace").strip().splitlines()
            return lines[-1][:300] if lines else f"exit {self.proc.poll()}"
        except OSError:
            return "no log"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and "error" not in self.ready

    def _deliver(self, artifact: Path) -> tuple[Path, str]:
        """Copy ``artifact`` into a fresh inbox folder: (that folder here, its path as the worker sees it)."""
        self.count += 1
        inbox = self.channel / "inbox" / str(self.count)
        shutil.copytree(artifact, inbox, symlinks=False) if artifact.is_dir() else inbox.mkdir()
        if self.uid is not None:
            for path in [inbox, *inbox.rglob("*")]:
                os.chown(path, self.uid, self.uid)
        return inbox, inside_path(str(inbox), str(self.channel)) if self.mode in ("root", "user") else str(inbox)

    def _ask(self, request: dict, timeout: float) -> dict:
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"error": "the evaluator stopped: " + self.stderr_tail()}
        return self._read(timeout)

    def measure(self, artifact: Path, rules, timeout: float, inputs: dict | None = None) -> dict:
        delivered = []
        try:
            delivered.append(self._deliver(artifact))
            request = {"adapter": delivered[0][1], "rules": dataclasses.asdict(rules) if rules else None,
                       "inputs": inputs}
            return self._ask(request, timeout)
        finally:
            for inbox, _ in delivered:
                shutil.rmtree(inbox, ignore_errors=True)

    def measure_many(self, artifacts: list[Path], rules, timeout: float) -> list[dict]:
        """One answer per artifact, measured together (the evaluator's ``measure_many``)."""
        delivered = []
        try:
            for artifact in artifacts:
                delivered.append(self._deliver(artifact))
            request = {"adapters": [where for _, where in delivered],
                       "rules": dataclasses.asdict(rules) if rules else None}
            answer = self._ask(request, timeout)
        finally:
            for inbox, _ in delivered:
                shutil.rmtree(inbox, ignore_errors=True)
        answers = answer.get("answers")
        if not isinstance(answers, list) or len(answers) != len(artifacts):
            return [{"error": answer.get("error") or "the evaluator answered without one answer per artifact"}
                    for _ in artifacts]
        return [a if isinstance(a, dict) else {"error": "the evaluator answered nonsense"} for a in answers]

    def close(self) -> None:
        try:
            processes.kill_tree(self.proc.pid)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            pass
        if self.uid is not None:
            processes.kill_uid(self.uid)
        shutil.rmtree(self.channel, ignore_errors=True)
        shutil.rmtree(self.spec_dir, ignore_errors=True)


def _host_caches() -> dict[str, str]:
    """Without isolation: the hub and datasets caches by path, never HF_HOME (it holds the token)."""
    return filesystem.cache_env({**filesystem.hf_cache_folders(), **filesystem.data_folders()})


def artifact_digest(folder: Path) -> str:
    """BLAKE2b of a folder as the evaluator receives it (copied with links followed): every
    file's relative path and bytes, and every folder's path, in sorted order."""
    digest = hashlib.blake2b(digest_size=32)
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix().encode()
        if path.is_dir():
            digest.update(b"d\0" + relative + b"\0")
        elif path.is_file():
            digest.update(b"f\0" + relative + b"\0" + str(path.stat().st_size).encode() + b"\0")
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


class Pool:
    """Evaluator processes by (name, profile, GPU, isolation): one per grading worker at a time, reused.

    Within one batch an artifact whose bytes were measured already (a re-upload, a resubmitted
    copy, the demo's and tests' samples sharing the reference adapter) gets the same answer
    without a second run: the measurement depends on nothing but the artifact, the evaluator and
    its settings, which make the key. Only answers without an error are kept."""

    def __init__(self, scratch: Path | None = None):
        self.idle: dict[tuple, list[EvaluatorProcess]] = {}
        self.answers: dict[tuple, dict] = {}
        self.lock = threading.Lock()
        self.scratch = Path(scratch) if scratch else Path(tempfile.mkdtemp(prefix="agpool-"))

    @staticmethod
    def _key(spec: dict, artifact: Path, settings, gpu: str | None) -> tuple:
        return (spec["name"], settings.profile, gpu is not None, json.dumps(spec, sort_keys=True, default=str),
                artifact_digest(artifact))

    def measure(self, spec: dict, submitted: Path, settings, gpu: str | None, inputs: dict | None = None) -> dict:
        """``{evaluator name: answer}`` for the artifact of the submission in folder ``submitted``; ``inputs``:
        what a test that names the evaluator asked it to measure on (``grading.measure_on_request``)."""
        started = time.perf_counter()
        artifact = submitted / spec["artifact"]
        if not artifact.is_dir():
            return {spec["name"]: {"error": f"no {spec['artifact']} folder in the submission", "rate": None}}
        # measured ahead (no inputs) under the same key as here; inputs by their digest (200 prompts of up to
        # 4,000 characters per student would otherwise be kept in the key, 300 times over)
        asked = None if inputs is None else hashlib.blake2b(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
        same = self._key(spec if asked is None else {**spec, "inputs": asked}, artifact, settings, gpu)
        with self.lock:
            known = self.answers.get(same)
        if known is not None:
            return {spec["name"]: {**known, "seconds": round(time.perf_counter() - started, 2)}}
        answer = self._run(spec, settings, gpu, lambda process: process.measure(artifact, spec.get("adapters"),
                                                                                spec["timeout"], inputs))
        if not answer.get("error"):
            with self.lock:
                self.answers[same] = dict(answer)
        answer["seconds"] = round(time.perf_counter() - started, 2)
        return {spec["name"]: answer}

    def measure_ahead(self, spec: dict, artifacts: list[Path], settings, gpu: str | None) -> int:
        """Measure ``artifacts`` together in one request (the evaluator decodes them in one batch) and
        keep each answer without an error for :meth:`measure`; returns how many of ``artifacts`` now
        have an answer (copies of one adapter count each). Answers with an error are not kept: those
        artifacts are measured alone when their submission is graded."""
        keys = [self._key(spec, artifact, settings, gpu) for artifact in artifacts]
        with self.lock:
            todo = [(key, artifact) for key, artifact in zip(keys, artifacts, strict=True) if key not in self.answers]
        todo = list({key: (key, artifact) for key, artifact in todo}.values())  # the same bytes once
        if not todo:
            return len(artifacts)
        started = time.perf_counter()
        answers = self._run(spec, settings, gpu, lambda process: {"answers": process.measure_many(
            [artifact for _, artifact in todo], spec.get("adapters"), spec["timeout"] * len(todo))}, attempts=1)
        seconds = round((time.perf_counter() - started) / len(todo), 2)
        for (key, _), answer in zip(todo, answers.get("answers") or [], strict=False):
            if isinstance(answer, dict) and not answer.get("error") and answer.get("rate") is not None:
                with self.lock:
                    self.answers[key] = {**answer, "seconds_in_group": seconds}
        with self.lock:
            return sum(key in self.answers for key in keys)

    def known(self) -> dict:
        """The answers kept so far (to hand to a pool in another process: :meth:`learn`)."""
        with self.lock:
            return dict(self.answers)

    def learn(self, answers: dict) -> None:
        with self.lock:
            self.answers.update(answers)

    def _run(self, spec: dict, settings, gpu: str | None, ask, attempts: int = 2) -> dict:
        """``ask(process)`` on an idle evaluator process of this kind (started when none is idle); a dead
        or broken process is replaced and asked again while ``attempts`` last."""
        from autograder.isolation.host_isolation import probe

        mode = probe(settings.sandbox).mode
        key = (spec["name"], settings.profile, gpu, mode)
        with self.lock:
            process = self.idle.setdefault(key, []).pop() if self.idle.get(key) else None
        answer = None
        for _attempt in range(attempts):
            if process is None or not process.alive:
                if process is not None:
                    process.close()
                process = EvaluatorProcess(spec["name"], settings.profile, gpu, spec["memory_mb"],
                                           Sandbox(mode, self.scratch))
                if not process.alive:
                    answer = {"error": f"the evaluator could not start: {process.ready.get('error')}"}
                    process.close()
                    process = None
                    continue
            try:
                answer = ask(process)
            except Exception as error:  # noqa: BLE001 - copying into the inbox failed (disk full...): not retried
                process.close()
                process = None
                answer = {"error": f"the artifact could not be handed to the evaluator ({type(error).__name__})"}
                break
            if process.alive:
                break
            process.close()
            process = None
            if "did not answer" in str(answer.get("error", "")):
                break  # too slow, not broken: no second try
        if process is not None:
            with self.lock:
                self.idle.setdefault(key, []).append(process)
        answer = dict(answer or {"error": "no answer"})
        answer.setdefault("rate", None)
        return answer

    def close(self) -> None:
        with self.lock:
            for processes_ in self.idle.values():
                for process in processes_:
                    process.close()
            self.idle.clear()
        shutil.rmtree(self.scratch, ignore_errors=True)
