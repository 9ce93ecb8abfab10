"""A fork server for ``autograder.grading.job``: nbgrader is imported once per grading worker, not once
per submission (2-10 s each on a busy 2-core machine).

    server = JobServer();  code, log, over = server.run(course, assignment, student, env, timeout, memory_mb)

The server process imports nbgrader and the job module, then for each request forks a child
that runs ``job.main`` in its own session with the request's environment, its output in a log
file. The parent waits (killing the child's whole process tree past ``timeout``, or once the child
itself holds more than ``memory_mb``) and answers with the exit code, or ``null`` and why it was
killed. It runs as the grader and never runs student code (the kernels the child starts are
sandboxed). If the server itself dies, ``run`` says so and the caller starts a new one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.isolation import processes


class JobServer:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys; del sys.path[0]; "
                                      "from autograder.grading.jobserver import serve; serve()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     start_new_session=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the job server did not start ({line.strip()[:200] or self.proc.poll()})")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, course: Path, assignment: str, student: str, env: dict, timeout: float,
            memory_mb: int) -> tuple[int | None, str, str]:
        """(exit status or None, the job's log, "" or why it was killed: "timeout" or "memory")."""
        fd, log_path = tempfile.mkstemp(prefix="agjob-", suffix=".log")
        os.close(fd)
        try:
            request = {"course": str(course), "assignment": assignment, "student": student, "env": env,
                       "timeout": timeout, "memory_mb": memory_mb, "log": log_path}
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the job server stopped")
            answer = json.loads(line)
            return answer.get("exit"), Path(log_path).read_text(errors="replace"), answer.get("over") or ""
        finally:
            os.unlink(log_path)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def _warm_up() -> None:
    """Fill the caches every job would otherwise fill again in its own fork: pygments' compiled
    Python lexer, the markdown and HTML parsers' regexes, soupsieve's selectors, nbformat's
    validator (about 0.5-1 s per submission on 2 cores)."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    code = new_code_cell("import numpy as np\n\ndef f(x: int) -> float:\n    return x * 2.0  # why\n\nprint(f'{f(1)}')",
                         outputs=[new_output("stream", name="stdout", text="2.0\n"),
                                  new_output("error", ename="AssertionError", evalue="x", traceback=["x"])])
    notebook = new_notebook(cells=[new_markdown_cell("# A\n\n*b* `c` $x^2$\n\n- d\n- e"), code], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"}})
    try:
        nbformat.validate(notebook)
        HTMLExporter(template_name="classic").from_notebook_node(notebook)
    except Exception:  # noqa: BLE001 - only a cache: the jobs fill it themselves
        pass


def _warm_scrubber(course: Path, assignment: str) -> None:
    """The assignment's secret lines and their compiled pattern, cached here before the fork so
    each job inherits them (the course copy's source and release: the grader's files)."""
    from autograder.reports.scrub import Scrubber

    try:
        Scrubber.from_notebooks(course / "source" / assignment / f"{assignment}.ipynb",
                                course / "release" / assignment / f"{assignment}.ipynb")
    except Exception:  # noqa: BLE001 - only a cache: the job reads them itself
        pass


def serve() -> None:
    import jupyter_client.manager  # noqa: F401
    import nbconvert.exporters  # noqa: F401
    import nbgrader.apps.api  # noqa: F401 - the point of the server: imported once
    import nbgrader.preprocessors  # noqa: F401

    from autograder.grading import executor, job  # noqa: F401
    from autograder.reports import scrub  # noqa: F401

    _warm_up()
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        _warm_scrubber(Path(request["course"]), request["assignment"])
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setsid()
                log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(log, 1)
                os.dup2(log, 2)
                os.environ.clear()
                os.environ.update(request["env"])
                os.chdir(request["course"])
                code = job.main([request["course"], request["assignment"], request["student"]])
            except BaseException:  # noqa: BLE001 - into the log, like a crashed subprocess
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        reaped = {}

        def exit_code(pid=pid, reaped=reaped):
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                reaped["status"] = os.waitstatus_to_exitcode(raw)
            return reaped.get("status")

        status, over = processes.wait_bounded(pid, exit_code, float(request["timeout"]), int(request["memory_mb"]))
        if over:
            os.waitpid(pid, 0)
        print(json.dumps({"exit": status, "over": over}), flush=True)
