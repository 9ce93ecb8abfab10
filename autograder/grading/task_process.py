"""The student's own task functions, run apart from the notebook and from any model.

tiny_grpo's task is the student's design, so its checks are rules, and the kernel could report any
self-consistent lists. The functions that define the task (``expected_answer``, ``get_reward``) are
therefore called here, by the grader, on inputs it chooses: their source is taken from the notebook's
answer cells (:func:`task_source`: the functions and what they use, nothing the cells run at the top
level), and each batch of calls runs in a fresh process of its own (:class:`TaskRunner`) with the
standard library only. In a sandbox (bubblewrap) that process sees no site-packages, no submission
folder, no model cache and no artifact: no adapter or model can decide what the task's answers are.
Without a sandbox it runs as ``python -I -S`` (no site-packages on its path), which keeps an honest
notebook honest but cannot stop code that goes looking for them.

Each process sees one request (one function, a list of argument tuples) and answers with the
results as the kernel's probe reports them (``autograder.kernel.probe``'s plain values), checked by
``hidden_tests.validate`` before a judge reads them.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from autograder import hidden_test_files
from autograder.grading import hidden_tests

BOOT = r'''
import json, sys
def plain(v, d=0):
    if d > 12: return {"type": "object", "class": "too deeply nested"}
    if v is None: return {"type": "none", "value": None}
    for kind in (bool, int, float, str):
        if type(v) is kind:
            return {"type": kind.__name__, "value": v[:100000] if kind is str else v}
    if type(v) in (list, tuple):
        return {"type": type(v).__name__, "items": [plain(x, d + 1) for x in v[:10000]]}
    if type(v) is dict:
        return {"type": "dict", "items": {str(k)[:200]: plain(x, d + 1) for k, x in list(v.items())[:1000]}}
    return {"type": "object", "class": type(v).__qualname__[:200]}
def error(e):
    return {"type": "error", "error": type(e).__name__, "message": str(e)[:500]}
request = json.loads(sys.stdin.read())
answer, sys.stdout = sys.stdout, sys.stderr
space = {"__name__": "__task__"}
try:
    exec(compile(request["source"], "<your task cells>", "exec"), space)
    function = space[request["name"]]
    results = []
    for args in request["calls"]:
        try:
            results.append(plain(function(*args)))
        except Exception as e:
            results.append(error(e))
except BaseException as e:
    results = [error(e)] * len(request["calls"])
answer.write("\n" + json.dumps({"results": results}) + "\n")
answer.flush()
'''
TIMEOUT_S = 60
MEMORY_MB = 1024


def _magics_out(text: str) -> str:
    """IPython lines (``%time``, ``!pip``) as comments, so the cell parses as Python."""
    return "\n".join("# " + line if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())


def task_source(cells: list[str], roots: tuple[str, ...]) -> str:
    """The definitions ``roots`` need from the answer cells' sources, with an import for each standard-library
    module they name without importing it (the notebook imported it in an earlier cell)."""
    text = "\n\n".join(_magics_out(cell) for cell in cells)
    kept = hidden_test_files.kernel_source(text, roots=roots)
    tree = ast.parse(kept)
    bound = {name for node in tree.body for name in hidden_test_files.bound_names(node)}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imports = sorted(name for name in used - bound if name in sys.stdlib_module_names)
    return "".join(f"import {name}\n" for name in imports) + kept


def _hidden_folders() -> tuple[str, ...]:
    """What the task process must not see: every site-packages (the model libraries) and the kit's cache."""
    found = {sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})["purelib"]
             for prefix in (sys.prefix, sys.base_prefix)}
    found |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    return tuple(sorted(p for p in found if os.path.isdir(p)))


class TaskRunner:
    """Calls one of the task's functions on the grader's inputs, in a fresh process per call of :meth:`call`."""

    def __init__(self, source: str, mode: str = "none", uid: int | None = None):
        self.source, self.mode, self.uid = source, mode, uid

    def call(self, name: str, calls: list[tuple]) -> list[dict]:
        """The observation of ``name(*args)`` for each args in ``calls`` (an error observation where it raised,
        and for every call when the process gave no readable answer)."""
        request = json.dumps({"source": self.source, "name": name, "calls": [list(args) for args in calls]})
        try:
            results = self._run(request)
        except _NoAnswer as why:
            results = [{"type": "error", "error": "TaskProcessError", "message": str(why)}] * len(calls)
        return results

    def _run(self, request: str) -> list[dict]:
        argv = [getattr(sys, "_base_executable", sys.executable), "-I", "-S", "-c", BOOT]
        channel, private = Path(tempfile.mkdtemp(prefix="agt-")), Path(tempfile.mkdtemp(prefix="ags-"))
        try:
            command = argv if self.mode not in ("root", "user") else self._sandboxed(argv, channel, private)
            try:
                done = subprocess.run(command, input=request, capture_output=True, text=True, timeout=TIMEOUT_S,
                                      cwd=str(channel), env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                                             "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"},
                                      errors="replace", start_new_session=True)
            except subprocess.TimeoutExpired:
                raise _NoAnswer(f"your task's functions did not finish within {TIMEOUT_S} s") from None
        finally:
            shutil.rmtree(channel, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)
        return _answer(done.stdout, json.loads(request)["calls"], done.stderr)

    def _sandboxed(self, argv: list[str], channel: Path, private: Path) -> list[str]:
        """The launcher's command for ``argv`` in a sandbox; its spec is written to ``private`` (the grader's only)."""
        from autograder.isolation.launcher import LAUNCH_BOOT
        from autograder.isolation.spec import HOME, Spec

        if self.uid is not None:
            os.chown(channel, self.uid, self.uid)
        spec = Spec(mode=self.mode, channel=str(channel), uid=self.uid or 0, disk_mb=64, memory_mb=MEMORY_MB,
                    pids_max=64, workdir=f"{HOME}/task", autograder_parts=(), env={"PYTHONHASHSEED": "0"},
                    argv=argv, hide=_hidden_folders())
        return [sys.executable, "-I", "-c", LAUNCH_BOOT, "--spec", str(spec.write(private))]


class _NoAnswer(Exception):
    pass


def _answer(stdout: str, calls: list, stderr: str) -> list[dict]:
    """The results line of the process's output (its last line that reads as one), validated."""
    for line in reversed(stdout.strip().splitlines()[-5:]):
        try:
            results = json.loads(line)["results"]
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(results, list) or len(results) != len(calls):
            break
        observations = {str(i): result for i, result in enumerate(results)}
        try:
            hidden_tests.validate({"observations": observations})
        except hidden_tests.Malformed as why:
            raise _NoAnswer(f"your task's functions gave a result that could not be judged: {why}") from None
        return results
    last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    raise _NoAnswer("your task's functions stopped before answering" + (f" ({last[0][:200]})" if last else ""))
