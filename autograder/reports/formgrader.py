"""``python -m autograder formgrader OUT``: nbgrader's formgrader on a graded folder, started the right way.

- refuses a folder ``autograde`` did not write, with one line saying what to run first;
- rewrites OUT's nbgrader config if it is missing (a hand-edited one is kept aside with a line)
  and repairs graded notebooks an older grader left invalid (markdown cells with outputs);
- runs ``jupyter server`` with only what formgrader needs: bound to 127.0.0.1, a fresh token
  (passed in the environment, never on the command line), no browser, root folder OUT, no
  terminals, and submissions rendered through nbconvert's HTML sanitizer (:data:`HARDENING`);
- finds the port race-free: jupyter binds the port itself (``--port 0`` lets the system choose;
  a busy one is retried), and the port it actually listens on is read back from the server's own
  runtime file, then the server is polled until it answers: the URL is printed only then;
- prints the one URL to open, ``http://127.0.0.1:PORT/formgrader?token=...``, and what to run
  after grading; Ctrl-C stops the server;
- refuses a second formgrader on the same OUT with one line naming the first (:data:`LOCK_NAME`):
  two servers would write the same gradebook, and a grade saved in one would be lost in the other.
"""
from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from autograder.nbconfig import MARKDOWN_FILTER
from autograder.reports.grades import check_out, ensure_out_config, repair_graded

EXTENSIONS = "{'nbgrader.server_extensions.formgrader': True}"
LOCK_NAME = ".formgrader.lock"
"""In OUT, held (``flock``) while a formgrader serves it; it names the server's address (never its token)."""
HARDENING = (
    # Students write the notebooks formgrader shows. A <script> in a written answer, or an HTML or
    # JavaScript output, would run in the grader's browser on this server's origin, where it can
    # call the server's API (kernels, terminals) with the grader's cookies. nbconvert's own
    # sanitizer (bleach) escapes unsafe markup in markdown cells and HTML outputs and drops
    # JavaScript and SVG outputs before formgrader renders a submission.
    "--HTMLExporter.sanitize_html=True",
    "--HTMLExporter.preprocessors=['nbconvert.preprocessors.sanitize.SanitizeHTML']",
    # formgrader's own template renders written answers with `markdown2html` and never cleans the
    # result: a markdown link to javascript: stayed live. Rendered, then cleaned (safe_markdown).
    f"--HTMLExporter.filters={MARKDOWN_FILTER!r}",
    # grading needs no terminal: none to open, even for a script that got past the sanitizer
    "--ServerApp.terminals_enabled=False",
)


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    """The page to open: /formgrader with the token."""
    base: str
    token: str
    runtime: Path
    log: Path
    lock: int | None = None
    """The open, locked LOCK_NAME file, released by :meth:`stop`."""

    def stop(self) -> None:
        if self.lock is not None:
            os.close(self.lock)  # closing releases the flock
            self.lock = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)


def _answers(base: str, token: str) -> bool:
    request = urllib.request.Request(f"{base}/api/status", headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def _server_port(runtime: Path, pid: int) -> int | None:
    """The port the server listens on, from the runtime file jupyter writes once it is bound."""
    for path in runtime.glob(f"jpserver-{pid}.json"):
        try:
            return int(json.loads(path.read_text())["port"])
        except (OSError, ValueError, KeyError):
            return None
    return None


def start(out: Path, port: int = 8888, ip: str = "127.0.0.1", timeout: float = 120.0, log=None,
          attempts: int = 3) -> Server:
    """Start formgrader on OUT; returns once it answers (RuntimeError with the server's last lines).
    A server that lost its port to another process between choosing and binding it is started again."""
    out = Path(out).resolve()
    check_out(out, "formgrader")
    lock = _lock(out)
    say = log or (lambda line: print(line, file=sys.stderr))
    try:
        ensure_out_config(out, say)
        repair_graded(out, say)
        for attempt in range(1, attempts + 1):
            try:
                server = _start(out, port, ip, timeout)
            except PortLost as error:
                if attempt == attempts:
                    raise RuntimeError(str(error)) from None
                say(f"the port was taken while jupyter server started: trying again ({attempt}/{attempts})")
                continue
            os.ftruncate(lock, 0)
            os.write(lock, json.dumps({"pid": os.getpid(), "address": server.base}).encode())
            server.lock = lock
            return server
    except BaseException:
        os.close(lock)
        raise
    raise AssertionError("unreachable")


def _lock(out: Path) -> int:
    """The locked LOCK_NAME of OUT; RuntimeError naming the formgrader that already holds it."""
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except ValueError:
            holder = {}
        os.close(fd)
        where = f" at {holder['address']}/formgrader (process {holder.get('pid')})" if holder.get("address") else ""
        raise RuntimeError(f"formgrader is already running on {out}{where}: use that one (its terminal printed "
                           "the URL with its token), or stop it with Ctrl-C first; two would overwrite each "
                           "other's grades") from None
    return fd


class PortLost(RuntimeError):
    pass


def _start(out: Path, port: int, ip: str, timeout: float) -> Server:
    token = secrets.token_hex(24)
    runtime = Path(tempfile.mkdtemp(prefix="formgrader-"))
    logfile = runtime / "server.log"
    env = {**os.environ, "JUPYTER_TOKEN": token, "JUPYTER_RUNTIME_DIR": str(runtime),
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    argv = [sys.executable, "-m", "jupyter_server", f"--ServerApp.ip={ip}", f"--ServerApp.port={int(port)}",
            "--ServerApp.port_retries=50", "--ServerApp.open_browser=False", f"--ServerApp.root_dir={out}",
            f"--ServerApp.jpserver_extensions={EXTENSIONS}", *HARDENING]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")  # a grading box run as root: still local-only, with a token
    with open(logfile, "w") as handle:
        process = subprocess.Popen(argv, cwd=out, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(process, "", "", token, runtime, logfile)
    stop_at = time.monotonic() + timeout
    while time.monotonic() < stop_at:
        if process.poll() is not None:
            text = logfile.read_text(errors="replace")
            tail = "\n".join(text.splitlines()[-15:])
            server.stop()
            lost = "no available port" in text or "already in use" in text
            raise (PortLost if lost else RuntimeError)(
                f"jupyter server exited ({process.returncode}) before formgrader answered:\n{tail}")
        found = _server_port(runtime, process.pid)
        if found is not None:
            host = "127.0.0.1" if ip in ("127.0.0.1", "0.0.0.0", "") else ip
            base = f"http://{host}:{found}"
            if _answers(base, token):
                server.base, server.url = base, f"{base}/formgrader?token={token}"
                return server
        time.sleep(0.2)
    tail = "\n".join(logfile.read_text(errors="replace").splitlines()[-15:])
    server.stop()
    raise RuntimeError(f"formgrader did not answer within {timeout:.0f} s:\n{tail}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def late_lines(out: Path) -> list[str]:
    """formgrader's score columns do not subtract nbgrader's late penalty: say it beside them."""
    from autograder.reports.feedback import load_results

    late = [r for r in load_results(out) if r.late_penalty]
    if not late:
        return []
    return ["late penalties (formgrader's scores are before them; grades.csv, the LMS file and the feedback pages "
            "subtract them):"] + [f"    {r.student}/{r.assignment}: -{r.late_penalty:g}" for r in late]


def serve(out: Path, port: int = 8888, ip: str = "127.0.0.1") -> int:
    """The command: start, print the URL, wait until Ctrl-C or SIGTERM (or the server ends)."""
    # Ctrl-C stops it even when started with SIGINT ignored (a background job of a script), and a
    # plain `kill` takes the server down with it (it runs in its own session, so no signal of ours
    # reaches it by itself)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    server = start(out, port, ip)
    print(f"formgrader is running on {Path(out)}: open this URL (it holds a one-time token)\n\n    {server.url}\n",
          flush=True)
    print("grade the written answers under Manual Grading (assignment > notebook > student); then stop this "
          f"with Ctrl-C and run\n"
          f"    python -m autograder grades {out}\n(server log: {server.log})", flush=True)
    for line in late_lines(out):
        print(line, flush=True)
    try:
        return server.process.wait() or 0
    except KeyboardInterrupt:
        print("\nstopping formgrader", flush=True)
        return 0
    finally:
        server.stop()
