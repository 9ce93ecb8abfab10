"""Grader-side measurements of a submission's artifacts, made outside the student's kernel.

An assignment declares one in ``autograder/samples/<id>.json``::

    "evaluator": {"name": "grpo_format", "artifact": "artifacts/grpo_format_adapter",
                  "tiers": {"full": {"test_adherence_50": 0.5, "test_adherence_70": 0.7, "test_adherence_90": 0.9},
                            "tiny": {"test_adherence_50": 0.3, "test_adherence_70": 0.4, "test_adherence_90": 0.5}}}

``tiers`` maps each profile to ``{tier cell grade_id: threshold}``; the flat form
``{grade_id: threshold}`` means the same thresholds in every profile. Grading in a profile the
per-profile form does not list is an error (the batch stops before any kernel starts).

Before the kernel starts, :class:`Pool` hands the submission's artifact to a long-lived evaluator
process (``worker.py``, one per grading worker and GPU, sandboxed like a kernel: no network, no
view of other submissions or the course source). It loads the base model once and measures each
submission's adapter on held-out data. The grader then:

- puts the measurement in the kernel's environment as ``AUTOGRADER_MEASUREMENTS`` (a JSON object
  keyed by evaluator name) so the notebook's tier cells can *print* it;
- sets each tier cell's score itself (full points when ``rate >= threshold``, else 0), whatever
  the kernel did in that cell, and writes one feedback line with the measured rate.

The per-evaluator contract (what is measured, the JSON fields) is at the top of its module
(``grpo_format.py``) and in docs/GRADING.md.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REGISTRY = {"grpo_format": "autograder.evaluators.grpo_format"}
MEASUREMENTS_VARIABLE = "AUTOGRADER_MEASUREMENTS"


def tiers_for(tiers: dict, profile: str, where: str = "evaluator") -> dict[str, float]:
    """``{grade_id: threshold}`` for ``profile`` from the flat or the per-profile form."""
    tiers = dict(tiers or {})
    if not tiers:
        return {}
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in tiers.values()]
    if all(numbers):
        chosen = tiers
    elif any(numbers) or not all(isinstance(v, dict) for v in tiers.values()):
        raise ValueError(f"{where}: \"tiers\" must be either {{grade_id: threshold}} or "
                         f"{{profile: {{grade_id: threshold}}}}, not a mix of both")
    elif profile not in tiers:
        raise ValueError(f"{where}: \"tiers\" has thresholds for the {', '.join(sorted(tiers))} profile(s) "
                         f"but grading runs in the {profile} profile: add a {profile!r} entry")
    else:
        chosen = tiers[profile]
    out = {}
    for grade_id, threshold in chosen.items():
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise ValueError(f"{where}: tier {grade_id!r} in the {profile} profile needs a threshold between 0 and "
                             f"1, not {threshold!r}")
        out[str(grade_id)] = float(threshold)
    return out


def declared(assignment, profile: str = "tiny") -> dict | None:
    """The assignment's evaluator with the tier thresholds of ``profile`` (see :func:`tiers_for`)."""
    spec = assignment.evaluator
    if spec is None:
        return None
    if spec.name not in REGISTRY:
        raise ValueError(f"{assignment.manifest}: evaluator.name: unknown evaluator {spec.name!r} "
                         f"(known: {', '.join(REGISTRY)})")
    tiers = tiers_for(spec.tiers, profile, f"{assignment.manifest} evaluator")
    return {"name": spec.name, "artifact": spec.artifact, "tiers": tiers, "profile": profile,
            "timeout": spec.timeout_s, "memory_mb": spec.memory_mb}


class EvaluatorProcess:
    """One long-lived, sandboxed ``autograder.evaluators.worker``: the base model stays loaded."""

    def __init__(self, name: str, profile: str, gpu: str | None, memory_mb: int, sandbox_mode: str):
        from autograder.isolation import sandbox

        self.channel = Path(tempfile.mkdtemp(prefix="age-", dir="/tmp" if len(tempfile.gettempdir()) > 40 else None))
        (self.channel / "inbox").mkdir()
        (self.channel / "empty").mkdir()
        self.count = 0
        argv = [sys.executable, "-c", "import sys; del sys.path[0]; from autograder.evaluators.worker import main; "
                "sys.exit(main(sys.argv[1:]))", name, profile]
        env = {"COURSE_PROFILE": profile, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
               "HF_DATASETS_OFFLINE": os.environ.get("HF_DATASETS_OFFLINE", "1"), "TOKENIZERS_PARALLELISM": "false",
               "PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
               "TQDM_DISABLE": "1", "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": gpu if gpu is not None else "",
               "AUTOGRADER_MEMORY_MB": str(memory_mb or 0),
               "AUTOGRADER_MEMORY_MODE": "rss" if gpu is not None else "as", **sandbox.cache_env()}
        self.uid = None
        if sandbox_mode in ("root", "user"):
            self.uid = sandbox.next_uid() if sandbox_mode == "root" else None
            spec = sandbox.Spec(mode=sandbox_mode, channel=str(self.channel), uid=self.uid or sandbox.UID_BASE,
                                gid=self.uid or sandbox.UID_BASE, disk_mb=512, workdir=f"{sandbox.HOME}/evaluator",
                                copy_from=str(self.channel / "empty"), readonly=tuple(sandbox.cache_paths()),
                                gpu=gpu is not None, env=env, argv=argv,
                                autograder_files=(*sandbox.KERNEL_MODULES, "evaluators"))
            command = [sys.executable, "-I", "-c", sandbox.LAUNCH_BOOT, "--spec", str(spec.write())]
            child_env = dict(os.environ)
        else:
            command = argv
            child_env = {**os.environ, **env}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.channel / "stderr.log", "wb"), text=True,
                                     cwd=self.channel / "empty", env=child_env, start_new_session=True)
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
            lines = (self.channel / "stderr.log").read_text(errors="replace").strip().splitlines()
            return lines[-1][:300] if lines else f"exit {self.proc.poll()}"
        except OSError:
            return "no log"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and "error" not in self.ready

    def measure(self, artifact: Path, timeout: float) -> dict:
        self.count += 1
        inbox = self.channel / "inbox" / str(self.count)
        if artifact.is_dir():
            shutil.copytree(artifact, inbox, symlinks=False)
        else:
            inbox.mkdir()
        if self.uid is not None:
            for path in [inbox, *inbox.rglob("*")]:
                os.chown(path, self.uid, self.uid)
        try:
            self.proc.stdin.write(json.dumps({"adapter": str(inbox)}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"error": "the evaluator stopped: " + self.stderr_tail()}
        answer = self._read(timeout)
        shutil.rmtree(inbox, ignore_errors=True)
        return answer

    def close(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=10)
        except Exception:
            pass
        if self.uid is not None:
            from autograder.isolation.sandbox import kill_uid

            kill_uid(self.uid)
        shutil.rmtree(self.channel, ignore_errors=True)


class Pool:
    """Evaluator processes by (name, profile, GPU): one per grading worker at a time, reused."""

    def __init__(self):
        self.idle: dict[tuple, list[EvaluatorProcess]] = {}
        self.lock = threading.Lock()

    def measure(self, spec: dict, submitted: Path, settings, gpu: str | None) -> dict:
        from autograder.isolation.sandbox import probe

        started = time.perf_counter()
        mode = probe(settings.sandbox).mode
        key = (spec["name"], settings.profile, gpu, mode)
        artifact = submitted / spec["artifact"]
        if not artifact.is_dir():
            return {spec["name"]: {"error": f"no {spec['artifact']} folder in the submission", "rate": None}}
        with self.lock:
            process = self.idle.setdefault(key, []).pop() if self.idle.get(key) else None
        answer = None
        for _attempt in range(2):  # a dead or broken worker is replaced once
            if process is None or not process.alive:
                if process is not None:
                    process.close()
                process = EvaluatorProcess(spec["name"], settings.profile, gpu, spec["memory_mb"], mode)
                if not process.alive:
                    answer = {"error": f"the evaluator could not start: {process.ready.get('error')}"}
                    process.close()
                    process = None
                    continue
            answer = process.measure(artifact, spec["timeout"])
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
        answer["seconds"] = round(time.perf_counter() - started, 2)
        return {spec["name"]: answer}

    def close(self) -> None:
        with self.lock:
            for processes in self.idle.values():
                for process in processes:
                    process.close()
            self.idle.clear()


_default: list[Pool] = []


def default_pool() -> Pool:
    if not _default:
        _default.append(Pool())
        atexit.register(_default[0].close)
    return _default[0]


def apply_tiers(result, spec: dict, record: dict | None) -> set:
    """Set the tier cells' scores from the grader's measurement; returns their grade ids."""
    measured = (result.measurements or {}).get(spec["name"], {})
    rate = measured.get("rate")
    error = measured.get("error")
    tiers = {gid: float(t) for gid, t in spec["tiers"].items() if gid in result.cells}
    profile = spec.get("profile") or measured.get("profile") or "?"
    thresholds = " / ".join(f"{t:.0%}" for t in sorted(tiers.values()))
    shown = []
    for gid, threshold in sorted(tiers.items(), key=lambda item: item[1]):
        points = result.cells[gid][1]
        passed = rate is not None and not error and rate + 1e-12 >= threshold
        result.cells[gid][0] = points if passed else 0.0
        result.cell_messages.pop(gid, None)
        if not passed:
            result.cell_messages[gid] = (f"held-out format adherence {rate:.0%} is below the {threshold:.0%} tier "
                                         f"({profile} profile)"
                                         if rate is not None and not error else
                                         f"held-out format adherence could not be measured ({error})")
        shown.append(f"{threshold:.0%}: {result.cells[gid][0]:g}/{points:g}")
        if record is not None:
            grade = record.setdefault("grades", {}).setdefault(f"{result.assignment}/{gid}", {})
            grade["auto_score"] = result.cells[gid][0]
            grade["needs_manual_grade"] = False
    if tiers:
        if rate is not None and not error:
            result.feedback.append(
                f"held-out format adherence measured by the grader: {rate:.0%} ({measured.get('hits')}/"
                f"{measured.get('total')} held-out prompts, greedy decoding); tiers of the {profile} profile "
                f"(thresholds {thresholds}): {', '.join(shown)}")
        else:
            result.feedback.append(f"held-out format adherence could not be measured: {error}; the adherence "
                                   f"tiers of the {profile} profile (thresholds {thresholds}) score 0 "
                                   f"({', '.join(shown)})")
    return set(tiers)


def dumps(measurements: dict) -> str:
    return json.dumps(measurements)
