"""A test's view of ``python -m autograder formgrader OUT``: the real command and server, driven
through formgrader's HTTP API the way its pages drive it (grades, comments, submission pages)."""
from __future__ import annotations

import html
import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

URL = re.compile(r"(http://127\.0\.0\.1:\d+)/formgrader\?token=([0-9a-f]+)")


def text_of(page: str) -> str:
    """What a reader sees: tags (syntax highlighting splits code into spans) and entities removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


class Formgrader:
    """Starts the command on a port the system picks (``--port 0``: no port is chosen by the test,
    so none can be taken in between) and waits for the URL it prints once the server answers."""

    def __init__(self, out: Path, timeout: float = 180.0):
        self.process = subprocess.Popen([sys.executable, "-m", "autograder", "formgrader", str(out), "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        stop_at = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, stop_at - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise AssertionError("formgrader printed no URL in time:\n" + "".join(self.seen)) from None
            if line is None:
                raise AssertionError(f"formgrader exited ({self.process.wait()}):\n" + "".join(self.seen))
            found = URL.search(line)
            if found:
                self.base, self.token = found.group(1), found.group(2)
                self.url = found.group(0)
                return

    def _read(self) -> None:
        for line in self.process.stdout:
            self.seen.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def request(self, path: str, method: str = "GET", body: dict | None = None) -> tuple[int, str]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method,
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    def json(self, path: str, method: str = "GET", body: dict | None = None):
        status, text = self.request(path, method, body)
        assert status == 200, f"{method} {path}: {status} {text[:500]}"
        return json.loads(text)

    def submissions(self, assignment: str, notebook: str) -> dict[str, dict]:
        """student -> formgrader's submitted-notebook entry (id, needs_manual_grade, score...)."""
        found = self.json(f"/formgrader/api/submitted_notebooks/{assignment}/{notebook}")
        return {entry["student"]: entry for entry in found}

    def grades(self, submission_id: str) -> dict[str, dict]:
        query = urllib.parse.urlencode({"submission_id": submission_id})
        return {g["name"]: g for g in self.json(f"/formgrader/api/grades?{query}")}

    def comments(self, submission_id: str) -> dict[str, dict]:
        query = urllib.parse.urlencode({"submission_id": submission_id})
        return {c["name"]: c for c in self.json(f"/formgrader/api/comments?{query}")}

    def grade(self, grade: dict, score: float) -> dict:
        return self.json(f"/formgrader/api/grade/{grade['id']}", "PUT", {"manual_score": score, "extra_credit": None})

    def comment(self, comment: dict, text: str) -> dict:
        return self.json(f"/formgrader/api/comment/{comment['id']}", "PUT", {"manual_comment": text})

    def stop(self) -> int:
        """Ctrl-C, as an instructor stops it; the command stops its server and exits 0."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                return self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                return self.process.wait()
        return self.process.returncode
