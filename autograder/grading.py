"""Autograde a folder of submissions: each in its own process and its own course copy.

A submission can be anything a student uploads, so every step here turns failure into a grade
and a feedback line instead of an exception: the batch always completes.

Per submission (``grade_one``): copy the template course into a private folder; sort the
submitted files (drop files that would shadow modules, check declared artifacts); rebuild the
notebook on the release's skeleton (``repair``); run ``nbgrader autograde`` in a subprocess whose
kernel is ``autograder.kernel_launcher`` (memory limit, integrity guard) and whose executor is
``autograder.nbgrader_ext.GuardedExecute`` (per-cell timeout, dead kernels, tamper probe); read
the scores; hide hidden tests and their tracebacks; ``nbgrader generate_feedback``; write
``feedback/<student>/<assignment>/{<id>.html, result.json, results.json}``. The batch
(``autograde``) runs those on N threads or on a Ray cluster, merges every submission into
OUT/gradebook.db and writes OUT/grades.csv.
"""
from __future__ import annotations

import csv
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from .assignments import Assignment
from .course import new_course, write_config, write_kernelspec

HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.DOTALL)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PRIORITY_ERRORS = ("CellTimeoutError", "DeadKernelError", "IntegrityError", "NotRun")
STATUSES = ("ok", "failed-tests", "timeout", "out-of-memory", "crashed", "integrity", "invalid", "missing", "no-gpu")


class SubmissionLayoutError(ValueError):
    """The submissions folder is not ``<student>/<assignment>/<files>``."""


@dataclass
class Result:
    student: str
    assignment: str
    score: float = 0.0
    """Points earned on autograded cells (manual cells are not counted until graded)."""
    max_score: float = 0.0
    """Autograded points available."""
    manual_max: float = 0.0
    """Points in manually graded answer cells, still to be graded by a person."""
    status: str = "ok"
    """ok | failed-tests | timeout | out-of-memory | crashed | integrity | invalid | missing | no-gpu"""
    seconds: float = 0.0
    cells: dict = field(default_factory=dict)
    """grade_id -> [score, max_score] for the autograded cells."""
    feedback: list = field(default_factory=list)
    """One line per failed check or repaired problem, safe to show the student."""
    late: bool = False
    submitted_at: str = ""
    """ISO time the submission was made (timestamp.txt, else the notebook's mtime)."""
    cell_messages: dict = field(default_factory=dict)
    """grade_id -> why that test failed (the check's message), for feedback and Gradescope."""


@dataclass
class Settings:
    """Batch-wide grading options (picklable: they travel to Ray workers)."""
    profile: str = "tiny"
    deadline: datetime | None = None
    late_penalty: float = 0.0
    """Fraction of the score deducted from late submissions (0: only marked late)."""
    memory_mb: int | None = None
    """Override every assignment's kernel memory limit."""
    timeout: int | None = None
    """Override every assignment's per-cell timeout (seconds)."""
    guard: bool = True
    gpus: int = 0
    """GPUs on this grader (detected by ``autograde``)."""


def discover(submissions: Path, assignment_ids: list[str]) -> list[tuple[str, str, Path]]:
    """(student, assignment, folder) for every submission; a clear error for a wrong layout."""
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise SubmissionLayoutError(f"submissions folder {submissions} does not exist")
    loose = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix == ".ipynb")
    if loose:
        raise SubmissionLayoutError(
            f"{submissions} holds notebooks directly ({', '.join(loose[:3])}); expected "
            "<student>/<assignment_id>/<assignment_id>.ipynb — use `python -m autograder collect` "
            "to sort an LMS download into that layout"
        )
    found = []
    for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for assignment_dir in sorted(p for p in student_dir.iterdir() if p.is_dir()):
            if assignment_dir.name in assignment_ids:
                found.append((student_dir.name, assignment_dir.name, assignment_dir))
    if not found:
        raise SubmissionLayoutError(
            f"no submissions found in {submissions}: expected folders <student>/<assignment_id>/ "
            f"with assignment_id one of {', '.join(assignment_ids)}"
        )
    return found


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _grade_cells(notebook) -> dict[str, float]:
    cells = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            cells[meta["grade_id"]] = float(meta.get("points", 0))
    return cells


def _manual_points(notebook) -> float:
    total = 0.0
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type != "code":
            total += float(meta.get("points", 0))
    return total


def _shadowing(destination: Path) -> list[str]:
    """Remove submitted .py files / packages whose names would shadow an installed module."""
    notes = []
    for entry in sorted(destination.iterdir()):
        if entry.is_file() and entry.suffix == ".py":
            name = entry.stem
        elif entry.is_dir() and (entry / "__init__.py").exists():
            name = entry.name
        else:
            continue
        if name in sys.stdlib_module_names or name in ("autograder", "helpers") or importlib.util.find_spec(name):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            notes.append(f"removed {entry.name} from the submission: it would replace the {name} module")
    return notes


def _place_submission(folder: Path, assignment: Assignment, destination: Path) -> tuple[Path | None, str | None, list[str]]:
    """Copy the submission into the course; returns (notebook path or None, reason unusable, notes)."""
    skipped: list[str] = []
    patterns = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", ".*")

    def ignore(directory, names):
        links = {n for n in names if os.path.islink(os.path.join(directory, n))}
        skipped.extend(sorted(links))
        return set(patterns(directory, names)) | links

    shutil.copytree(folder, destination, ignore=ignore)
    notes = [f"ignored the symbolic link {name}: submit real files" for name in skipped]
    notes += _shadowing(destination)
    expected = destination / f"{assignment.id}.ipynb"
    if not expected.exists():
        candidates = sorted(destination.glob("*.ipynb"))
        if len(candidates) == 1:
            candidates[0].rename(expected)
            notes.append(f"graded {candidates[0].name} as {assignment.id}.ipynb")
        elif not candidates:
            return None, f"no notebook found: submit {assignment.id}.ipynb", notes
        else:
            names = ", ".join(p.name for p in candidates)
            return None, f"several notebooks ({names}) and none named {assignment.id}.ipynb: submit exactly one", notes
    try:
        nbformat.validate(nbformat.read(expected, as_version=4))
    except Exception as error:  # not JSON, not a notebook, wrong schema
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return None, f"{assignment.id}.ipynb is not a valid Jupyter notebook ({reason}); re-download it from Jupyter/Colab", notes
    return expected, None, notes


def check_artifacts(folder: Path, assignment: Assignment) -> list[str]:
    """Feedback lines for declared artifacts that are missing, corrupt or for another base model."""
    notes = []
    expected_base = assignment.samples.get("base_models", {})
    for relative in assignment.artifacts:
        path = folder / relative
        if not path.exists():
            notes.append(f"artifact {relative} is missing: tests that evaluate it score 0")
            continue
        config = path / "adapter_config.json" if path.is_dir() else None
        if config is None:
            continue
        if not config.exists():
            notes.append(f"artifact {relative} has no adapter_config.json: it is not a saved adapter")
            continue
        try:
            base = json.loads(config.read_text()).get("base_model_name_or_path", "")
        except (ValueError, UnicodeDecodeError):
            notes.append(f"artifact {relative}/adapter_config.json is corrupt (not JSON)")
            continue
        weights = [p for p in path.glob("adapter_model.*")]
        if not weights:
            notes.append(f"artifact {relative} has no adapter_model weights")
        for weight in weights:
            if weight.suffix == ".safetensors":
                try:
                    raw = weight.read_bytes()
                    size = int.from_bytes(raw[:8], "little")
                    json.loads(raw[8:8 + size])
                except Exception:
                    notes.append(f"artifact {weight.relative_to(folder)} is corrupt (unreadable safetensors)")
        allowed = [name for name in expected_base.values()] if isinstance(expected_base, dict) else list(expected_base)
        if allowed and base and not any(base == a or base.endswith("/" + a.rsplit("/", 1)[-1]) or
                                        Path(base).name == Path(a).name for a in allowed):
            notes.append(f"artifact {relative} was trained on {base!r}, not on {' or '.join(map(repr, allowed))}")
    return notes


def _error_line(output) -> str:
    name = output.get("ename", "Error")
    value = ANSI.sub("", str(output.get("evalue", ""))).strip()
    if len(value) > 300:
        value = value[:300] + " ..."
    return f"{name}: {value}" if value else name


def _sanitize_autograded(path: Path) -> tuple[dict[str, str], set[str]]:
    """Hide test source and traceback lines; collect each test's failure message.

    Returns ({grade_id: message}, names of the errors seen in any cell).
    """
    notebook = nbformat.read(path, as_version=4)
    messages, enames = {}, set()
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        is_test = meta.get("grade") and cell.cell_type == "code" and not meta.get("solution")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                enames.add(output.get("ename", ""))
                if is_test:
                    line = _error_line(output)
                    if output.get("ename") == "CellTimeoutError":
                        line = "CellTimeoutError: the check ran past the per-cell time limit"
                    if meta["grade_id"] not in messages or output.get("ename") in PRIORITY_ERRORS:
                        messages[meta["grade_id"]] = line
                    output["traceback"] = [line]
            elif is_test and output.get("output_type") == "stream" and output.get("name") == "stderr":
                messages.setdefault(meta["grade_id"], "the check wrote to stderr (counted as a failure)")
        if is_test:
            cell.source = HIDDEN_REGION.sub("# (hidden tests run here when grading)", cell.source)
    nbformat.write(notebook, path)
    return messages, enames


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


def _kill_leftovers(marker: str) -> None:
    """Kill processes a submission left behind (they carry its state dir in their environment)."""
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


def _run(course: Path, args: list[str], env: dict, timeout: float) -> tuple[int | None, str]:
    """``autograder.job`` (nbgrader autograde + feedback) in a subprocess; on timeout the whole
    tree (kernel included) is killed."""
    merged = {**os.environ, **env}
    merged["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), merged.get("PATH", "")])
    proc = subprocess.Popen([sys.executable, "-m", "autograder.job", str(course), *args[1:]], cwd=course, env=merged, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
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


def submission_time(folder: Path, notebook_name: str) -> datetime | None:
    """nbgrader's timestamp.txt when present, else the notebook file's modification time (UTC)."""
    stamp = folder / "timestamp.txt"
    if stamp.exists():
        try:
            from nbgrader.utils import parse_utc

            return parse_utc(stamp.read_text().strip()).replace(tzinfo=timezone.utc)
        except Exception:
            pass
    notebooks = [folder / notebook_name] if (folder / notebook_name).exists() else sorted(folder.glob("*.ipynb"))
    if notebooks:
        return datetime.fromtimestamp(notebooks[0].stat().st_mtime, tz=timezone.utc)
    return None


def grading_env(settings: Settings, assignment: Assignment, course: Path, gpu: str | None) -> dict:
    guard_modules = ["numpy", "numpy.testing", "numpy.linalg", "math", "operator", "functools"]
    lazy_modules = ["torch", "torch.testing", "torch.nn", "torch.nn.functional"]  # recorded on first import
    memory = settings.memory_mb or assignment.memory_mb
    env = {
        "COURSE_PROFILE": settings.profile, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
        "HF_DATASETS_OFFLINE": os.environ.get("HF_DATASETS_OFFLINE", "1"), "MPLBACKEND": "Agg",
        "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1",
        # nbgrader scores a test cell 0 when anything reaches stderr: keep library warnings and
        # progress bars (model loading inside hidden tests) from costing a student points
        "PYTHONWARNINGS": "ignore", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
        "TQDM_DISABLE": "1",
        "JUPYTER_PATH": str(course / "jupyter"), "AUTOGRADER_STATE_DIR": str(course / ".grader-state"),
        "AUTOGRADER_MEMORY_MB": str(memory or 0), "AUTOGRADER_GUARD_MODULES": ",".join(guard_modules),
        "AUTOGRADER_GUARD_LAZY": ",".join(lazy_modules),
        # CUDA reserves far more address space than it uses: limit resident memory instead
        "AUTOGRADER_MEMORY_MODE": "rss" if gpu is not None else "as",
        "CUDA_VISIBLE_DEVICES": gpu if gpu is not None else "",
    }
    if settings.profile == "full" and assignment.needs_gpu_in_full is False and gpu is None:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def grade_one(template: Path, workdir: Path, student: str, assignment: Assignment, folder: Path,
              out: Path, env: dict | None = None, settings: Settings | None = None, gpu: str | None = None) -> Result:
    """Grade one submission in a private copy of ``template``; write its feedback under ``out``."""
    settings = settings or Settings(profile=(env or {}).get("COURSE_PROFILE", "tiny"))
    started = time.perf_counter()
    release = nbformat.read(template / "release" / assignment.id / f"{assignment.id}.ipynb", as_version=4)
    grade_points = _grade_cells(release)
    result = Result(student, assignment.id, max_score=sum(grade_points.values()), manual_max=_manual_points(release),
                    cells={name: [0.0, points] for name, points in grade_points.items()})
    when = submission_time(folder, f"{assignment.id}.ipynb")
    if when is not None:
        result.submitted_at = when.isoformat(timespec="seconds")
        if settings.deadline is not None:
            result.late = when > settings.deadline
    if settings.profile == "full" and assignment.needs_gpu_in_full and gpu is None:
        result.status = "no-gpu"
        result.feedback.append(
            f"{assignment.id} needs a GPU in the full profile and this grader has none: grade it on a GPU "
            "machine (or `--ray` with GPU workers), or use `--profile tiny` for a dry run")
        return _finish(result, out, started, None)

    course = Path(tempfile.mkdtemp(prefix=f"{_safe_id(student)[:40]}--{assignment.id}-", dir=workdir))
    try:
        return _grade_in(course, template, result, student, assignment, folder, out, settings, gpu, started)
    finally:
        _kill_leftovers(str(course / ".grader-state"))
        if not os.environ.get("AUTOGRADER_KEEP_COURSES"):  # debugging: keep the private course copies
            shutil.rmtree(course, ignore_errors=True)


def _grade_in(course, template, result, student, assignment, folder, out, settings, gpu, started) -> Result:
    shutil.copytree(template, course, dirs_exist_ok=True)
    timeout = settings.timeout or assignment.timeout
    write_config(course, timeout, grading=True, guard=settings.guard)
    env = grading_env(settings, assignment, course, gpu)
    submitted = course / "submitted" / student / assignment.id
    notebook, problem, notes = _place_submission(folder, assignment, submitted)
    result.feedback.extend(notes)
    if notebook is None:
        result.status = "missing" if problem.startswith("no notebook") else "invalid"
        result.feedback.append(problem)
        return _finish(result, out, started, None)
    from .repair import repair

    release_path = course / "release" / assignment.id / f"{assignment.id}.ipynb"
    try:
        fixed, repairs = repair(nbformat.read(notebook, as_version=4), nbformat.read(release_path, as_version=4))
    except Exception as error:  # a notebook so odd it cannot be rebuilt
        result.status = "invalid"
        result.feedback.append(f"{assignment.id}.ipynb could not be read cell by cell ({type(error).__name__})")
        return _finish(result, out, started, None)
    nbformat.write(fixed, notebook)
    result.feedback.extend(repairs)
    result.feedback.extend(check_artifacts(submitted, assignment))
    if result.submitted_at:
        (submitted / "timestamp.txt").write_text(
            datetime.fromisoformat(result.submitted_at).strftime("%Y-%m-%d %H:%M:%S.%f %Z").strip())

    code, log = _run(course, ["autograde", assignment.id, student], env, timeout=assignment.wall_timeout)
    logs = Path(out) / "logs" / student  # for the instructor, never shown to the student
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{assignment.id}.log").write_text(log[-200_000:])
    if "Exception while loading config file" in log:  # never grade without the guard and limits
        raise RuntimeError(f"nbgrader could not load the grading configuration; see {logs / assignment.id}.log")
    if code is None:
        result.status = "timeout"
        result.feedback.append(f"grading stopped after the {assignment.wall_timeout} s limit for the whole notebook")
        return _finish(result, out, started, None)
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
        return _finish(result, out, started, None)
    from . import gradebook

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
    result.score = sum(pair[0] for pair in result.cells.values())
    messages, enames = summary.get("messages", {}), set(summary.get("enames", []))
    result.cell_messages = {name: msg for name, msg in messages.items() if result.cells.get(name, [1, 1])[0] < points.get(name, 0)}
    for name, message in result.cell_messages.items():
        result.feedback.append(f"{name}: {message}")

    state = course / ".grader-state"
    memory = settings.memory_mb or assignment.memory_mb
    guard_notes = (state / "guard.txt").read_text().splitlines() if (state / "guard.txt").exists() else []
    for line in dict.fromkeys(guard_notes):
        result.feedback.append(f"before the tests ran, the grader restored what the notebook replaced: {line}")
    if "CellTimeoutError" in enames:
        result.status = "timeout"
        result.feedback.append(f"a cell ran past the {timeout} s per-cell limit and was interrupted; "
                               "later cells did not run (points earned before are kept)")
    elif (state / "memory").exists() or "MemoryError" in enames:
        result.status = "out-of-memory"
        result.feedback.append(f"the notebook needed more than the {memory} MiB memory limit"
                               + ("; the kernel was stopped there" if "DeadKernelError" in enames else ""))
    elif "DeadKernelError" in enames or "DeadKernelError" in log:
        result.status = "crashed"
        result.feedback.append("the Python kernel died while running the notebook (os._exit, a killed process or a "
                               "crash in native code); later cells did not run (points earned before are kept)")
    elif "IntegrityError" in enames:
        result.status = "integrity"
    elif result.status == "ok" and result.score < result.max_score:
        result.status = "failed-tests"
    html_file = course / "feedback" / student / assignment.id / f"{assignment.id}.html"
    result._record = record  # type: ignore[attr-defined]  (merged into OUT/gradebook.db by the batch)
    return _finish(result, out, started, html_file if summary.get("feedback") and html_file.exists() else None)


def _summary_html(result: Result) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in result.feedback)
    late = " (late)" if result.late else ""
    return (f"<div id='autograder-summary' style='border:2px solid #888;padding:8px;margin:8px'>"
            f"<h2>{html.escape(result.assignment)}: {result.score:g} / {result.max_score:g}{late}</h2>"
            f"<p>status: {html.escape(result.status)}</p><ul>{items}</ul></div>")


def gradescope_json(result: Result) -> dict:
    """Gradescope autograder results (https://gradescope-autograders.readthedocs.io)."""
    tests = []
    for name, (score, max_score) in result.cells.items():
        tests.append({"name": name, "score": score, "max_score": max_score,
                      "status": "passed" if score >= max_score else "failed",
                      "output": result.cell_messages.get(name, "" if score >= max_score else "not passed")})
    output = [f"status: {result.status}" + (" (late)" if result.late else "")] + list(result.feedback)
    return {"score": result.score, "max_score": result.max_score, "output": "\n".join(output),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"status": result.status, "late": result.late, "submitted_at": result.submitted_at,
                           "manual_max": result.manual_max}}


def _finish(result: Result, out: Path, started: float, html_file: Path | None) -> Result:
    result.seconds = round(time.perf_counter() - started, 1)
    target = Path(out) / "feedback" / result.student / result.assignment
    target.mkdir(parents=True, exist_ok=True)
    page = target / f"{result.assignment}.html"
    if html_file is not None:
        text = html_file.read_text(errors="replace")
        text = text.replace("<body>", "<body>" + _summary_html(result), 1) if "<body>" in text else _summary_html(result) + text
        page.write_text(text)
    else:  # still give the student a page that says what happened
        page.write_text(f"<html><body>{_summary_html(result)}</body></html>")
    (target / "result.json").write_text(json.dumps(asdict(result), indent=2))
    (target / "results.json").write_text(json.dumps(gradescope_json(result), indent=2))
    return result


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


def prepare_template(assignments: list[Assignment], scratch: Path) -> Path:
    template = new_course(assignments, where=scratch)
    write_kernelspec(template / "jupyter")
    return template


def _bare_template(assignments: list[Assignment], scratch: Path) -> Path:
    """Just enough of a course for ``no-gpu`` results: each release's cells (for the points)."""
    template = scratch / "bare"
    for assignment in assignments:
        target = template / "release" / assignment.id / f"{assignment.id}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(assignment.source, target)
    return template


def autograde(submissions: Path, out: Path, assignments: list[Assignment], workers: int = 1,
              profile: str = "tiny", *, deadline: datetime | str | None = None, late_penalty: float = 0.0,
              memory_mb: int | None = None, timeout: int | None = None, ray_address: str | None = None,
              guard: bool = True, log=None) -> list[Result]:
    """Grade every submission; write OUT/grades.csv, OUT/gradebook.db and OUT/feedback/<student>/<assignment>/."""
    by_id = {a.id: a for a in assignments}
    jobs = discover(Path(submissions), list(by_id))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if isinstance(deadline, str):
        deadline = parse_deadline(deadline)
    needed = [by_id[name] for name in dict.fromkeys(job[1] for job in jobs)]
    gpus = 0
    if ray_address is None and (profile in ("auto", "full")) and any(a.needs_gpu_in_full for a in needed):
        gpus = detect_gpus()
    settings = Settings(profile=resolve_profile(profile, gpus), deadline=deadline, late_penalty=late_penalty,
                        memory_mb=memory_mb, timeout=timeout, guard=guard, gpus=gpus)
    from . import gradebook

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        if ray_address is None and settings.profile == "full" and not settings.gpus and all(
                a.needs_gpu_in_full for a in needed):
            template = _bare_template(needed, Path(scratch))  # nothing will run: releases only
        else:
            template = prepare_template(needed, Path(scratch))
        duedate = deadline.astimezone(timezone.utc).replace(tzinfo=None) if deadline is not None else None

        def record(result: Result, rec) -> Result:
            if result.late:
                if settings.late_penalty:
                    deducted = round(result.score * settings.late_penalty, 6)
                    result.score -= deducted
                    result.feedback.append(f"late (submitted {result.submitted_at}): {settings.late_penalty:.0%} "
                                           f"deducted ({deducted:g} points)")
                else:
                    result.feedback.append(f"late: submitted {result.submitted_at}, after the deadline "
                                           "(marked only, nothing deducted)")
                _rewrite_feedback_json(result, out)
            try:
                if (template / "gradebook.db").exists():
                    gradebook.merge(out, template / "gradebook.db", result.assignment, result.student, rec,
                                    duedate)
            except Exception as error:  # the gradebook is a convenience; grades.csv is the record
                result.feedback.append(f"(grader) gradebook not updated: {type(error).__name__}: {error}"[:300])
            if log:
                log(f"  {result.student}/{result.assignment}: {result.score:g}/{result.max_score:g} {result.status}")
            return result

        if ray_address is not None:
            from .remote import grade_on_ray

            for result, rec in grade_on_ray(jobs, by_id, settings, ray_address, out):
                results.append(record(result, rec))
        else:
            workdir = Path(scratch) / "work"
            workdir.mkdir()
            os.chmod(workdir, 0o711)  # a submission cannot list its neighbours' folders
            visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
            gpu_slots = (visible or [str(i) for i in range(settings.gpus)])[: settings.gpus]
            slot_lock = threading.Condition()

            def run(job):
                student, assignment_id, folder = job
                assignment = by_id[assignment_id]
                gpu = None
                wants_gpu = settings.profile == "full" and assignment.needs_gpu_in_full and settings.gpus > 0
                try:
                    if wants_gpu:
                        with slot_lock:
                            slot_lock.wait_for(lambda: gpu_slots)
                            gpu = gpu_slots.pop()
                    result = grade_one(template, workdir, student, assignment, folder, out, settings=settings, gpu=gpu)
                except Exception as error:  # never lose the batch to one submission
                    result = Result(student, assignment_id, status="crashed",
                                    feedback=[f"grader error: {type(error).__name__}: {error}"[:400]])
                    result = _finish(result, out, time.perf_counter(), None)
                finally:
                    if gpu is not None:
                        with slot_lock:
                            gpu_slots.append(gpu)
                            slot_lock.notify()
                return result

            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                futures = {pool.submit(run, job): i for i, job in enumerate(jobs)}
                ordered: dict[int, Result] = {}
                for future in as_completed(futures):
                    result = future.result()
                    ordered[futures[future]] = record(result, getattr(result, "_record", None))
                results = [ordered[i] for i in range(len(jobs))]
    results.sort(key=lambda r: (r.student, r.assignment))
    write_grades(_all_results(out, results), out / "grades.csv")
    return results


def _all_results(out: Path, fresh: list[Result]) -> list[Result]:
    """This run's results plus earlier runs' on the same OUT (feedback/*/*/result.json), so
    grades.csv, like the gradebook, is updated rather than replaced by a partial re-run."""
    merged = {(r.student, r.assignment): r for r in fresh}
    for path in sorted(Path(out).glob("feedback/*/*/result.json")):
        try:
            data = json.loads(path.read_text())
            old = Result(**{k: v for k, v in data.items() if k in Result.__dataclass_fields__})
        except Exception:
            continue
        merged.setdefault((old.student, old.assignment), old)
    return sorted(merged.values(), key=lambda r: (r.student, r.assignment))


def _rewrite_feedback_json(result: Result, out: Path) -> None:
    target = Path(out) / "feedback" / result.student / result.assignment
    (target / "result.json").write_text(json.dumps(asdict(result), indent=2))
    (target / "results.json").write_text(json.dumps(gradescope_json(result), indent=2))


def parse_deadline(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def write_grades(results: list[Result], path: Path) -> None:
    cell_names = list(dict.fromkeys(name for result in results for name in result.cells))
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "assignment", "score", "max_score", "manual_max", "status", "late",
                         "submitted_at", "seconds", *cell_names, "feedback"])
        for r in results:
            cells = [f"{r.cells[name][0]:g}" if name in r.cells else "" for name in cell_names]
            writer.writerow([r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", f"{r.manual_max:g}",
                             r.status, "late" if r.late else "", r.submitted_at, r.seconds, *cells,
                             " | ".join(r.feedback)])


def format_table(results: list[Result]) -> str:
    rows = [("student", "assignment", "score", "status")]
    rows += [(r.student, r.assignment, f"{r.score:g} / {r.max_score:g}", r.status + (" (late)" if r.late else ""))
             for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
