"""Measurements a hidden test asks for while its notebook runs, made by the grader's own evaluator pool.

Most measurements need only the submitted artifact, so the grader makes them before the job starts
(``grading.submission``, or in groups: ``grading.measure_ahead``). A test whose inputs come from the
notebook can only ask once its probe has reported: tiny_grpo's improvement test (``EVALUATE_WITH``)
measures the adapter on prompts of the student's own task. The executor then asks here (:func:`ask`):
it writes the test's name and the inputs into the submission's state folder (the grader's; the kernel
never sees it) and waits. The grader, which is waiting for the job anyway, answers while it runs
(:class:`Desk`) from the same :class:`~autograder.evaluators.pool.Pool` as every other measurement (the
same sandbox, adapter checks and cache), so evaluators are started in one place only.
"""
from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

FOLDER = "measure"
POLL_S = 0.1


def _write(path: Path, value: dict) -> None:
    """Whole or not at all: the other side never reads half a file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value))
    os.replace(partial, path)


def ask(state: str | Path, test: str, inputs: dict, until: float) -> dict:
    """The grader's measurement for hidden test ``test`` on ``inputs`` (from the job's executor); an
    ``error`` entry when no answer came by ``until`` (``time.time()``)."""
    folder = Path(state) / FOLDER
    folder.mkdir(exist_ok=True)
    name = secrets.token_hex(8)
    _write(folder / f"{name}.request", {"test": test, "inputs": inputs})
    answer = folder / f"{name}.answer"
    while time.time() < until:
        if answer.exists():
            try:
                found = json.loads(answer.read_text())
            except ValueError:
                found = None
            return found if isinstance(found, dict) else {"error": "the grader's answer could not be read"}
        time.sleep(POLL_S)
    return {"error": "the grader did not measure it before the notebook's time limit"}


class Desk:
    """While the job runs (``with Desk(state, measure):``), answers each request with ``measure(test,
    inputs)`` in a thread of the grader's process; a failing ``measure`` answers with an error line."""

    def __init__(self, state: Path, measure: Callable[[str, dict], dict]):
        self.folder, self.measure = Path(state) / FOLDER, measure
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Desk:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def _serve(self) -> None:
        while not self.done.wait(POLL_S):
            for request in sorted(self.folder.glob("*.request")):
                self._answer(request)

    def _answer(self, request: Path) -> None:
        try:
            asked = json.loads(request.read_text())
            answer = self.measure(str(asked["test"]), dict(asked["inputs"]))
        except Exception as error:  # noqa: BLE001 - one request's failure is that test's line, not the batch's
            answer = {"error": f"the grader could not measure it ({type(error).__name__})"}
        request.unlink(missing_ok=True)
        _write(request.with_suffix(".answer"), answer)
