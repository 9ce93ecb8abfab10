"""nbgrader preprocessors the grader puts into ``nbgrader autograde`` (see ``autograder.nbconfig``).

- :class:`ProbeExecute` replaces nbgrader's ``Execute``. Ordinary cells run as usual. A graded
  test cell runs in two steps, both outside IPython's input history: its visible checks (they
  teach; their output is shown, their verdict is not used), then its hidden test's probe
  (``autograder.kernel.probe.run`` with the kernel part of ``solutions/<id>/tests/<test>.py``).
  The probe's one observations message is taken out of the outputs and judged here, in the
  grader's process, against the reference's observations (``tests/expected.json``): the kernel
  never sees an expected value or a tolerance. The verdict is written into the cell's outputs in
  nbgrader's own terms (an error: 0; a number: partial credit; nothing: full points), so the
  gradebook, the feedback page and formgrader read it as they read any test cell; every other
  error or stderr output of the cell becomes plain text, so no output of the student's code can
  change the score.

  After a cell times out, the kernel dies or the notebook passes its time limit
  (the job settings' ``deadline``), no further cell runs: later cells get an error output
  saying why, tests that never ran score 0, tests before keep their points, and the reason goes
  to ``stopped.txt`` in the grader's state folder. Each test cell's score is appended to
  ``progress.jsonl`` there as soon as it is known, so a job killed at the hard time limit keeps
  its earned points.

  A test that names an evaluator (``EVALUATE_WITH``) gets its measurement from the grader's evaluator
  pool, asked through ``grading.measure_on_request`` with the inputs its probe reported; the executor
  starts no evaluator itself.

  With ``record=True`` (``autograder.authoring.expected``) it runs the solution notebook and keeps
  each probe's observations as the expected values instead of judging.
- :class:`CapOutput` bounds every output (characters and lines), so a cell printing megabytes
  does not blow up the autograded notebook, the gradebook or the feedback page.
"""
from __future__ import annotations

import json
import os
import secrets
import time

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Integer, List, Unicode

from autograder.grading import hidden_tests
from autograder.grading.job_settings import JobSettings
from autograder.kernel.probe import MIME

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
VERDICT = "course_kit_verdict"
"""Metadata key of the display output that carries a partial-credit verdict's lines."""
MAX_REPORT_CHARS = 4_000_000
STOPPING_ERRORS = ("CellTimeoutError",)


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _text(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text)


def _is_test(cell) -> bool:
    return cell.cell_type == "code" and bool(is_grade(cell)) and not is_solution(cell)


def as_text(outputs: list) -> list:
    """Outputs of a test cell's own code, made unable to score: errors and stderr become stdout
    text, results become displays (nbgrader would read an error as 0 and a result as credit)."""
    kept = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "error":
            kept.append(_text(f"{output.get('ename')}: {output.get('evalue')}\n"))
        elif kind == "stream":
            kept.append(_text(output.get("text", "")))
        elif kind == "execute_result":
            kept.append(NotebookNode(output_type="display_data", data=output.get("data", {}),
                                     metadata=output.get("metadata", {})))
        elif MIME not in output.get("data", {}):
            kept.append(output)
    return kept


def take_report(outputs: list) -> tuple[dict | None, str | None, list]:
    """(the probe's report, why there is none, the other outputs) from the probe step's outputs."""
    found = [o for o in outputs if MIME in o.get("data", {})]
    rest = [o for o in outputs if MIME not in o.get("data", {})]
    if not found:
        errors = [o for o in outputs if o.get("output_type") == "error"]
        why = f"{errors[-1].get('ename')}: {errors[-1].get('evalue')}" if errors else "none arrived"
        return None, why, rest
    if len(found) > 1:
        return None, "it was sent more than once", rest
    text = found[0]["data"][MIME]
    if not isinstance(text, str) or len(text) > MAX_REPORT_CHARS:
        return None, "it was too large", rest
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        return None, "it could not be read", rest
    if not isinstance(report, dict) or not isinstance(report.get("observations"), dict):
        return None, "it could not be read", rest
    try:
        hidden_tests.validate(report)
    except hidden_tests.Malformed as why:
        return None, f"it could not be judged: {why}", rest
    return report, None, rest


def verdict_outputs(verdict: hidden_tests.Verdict, points: float) -> list:
    """The verdict in nbgrader's terms: nothing (full points), a number (partial), an error (0)."""
    more = len(verdict.failures) - 3
    shown = verdict.failures[:3] + ([f"... and {more} more"] if more > 0 else [])
    notes = [_text("\n".join(verdict.notes) + "\n")] if verdict.notes else []
    if not verdict.failures:
        return notes
    if verdict.score <= 0:
        return notes + [_error(verdict.cause, "\n".join(shown))]
    earned = round(points * verdict.score, 2)
    return notes + [NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                                 data={"text/plain": f"{earned:g}"}),
                    NotebookNode(output_type="display_data", metadata={VERDICT: True},
                                 data={"text/plain": f"partial credit {earned:g}/{points:g}:\n" + "\n".join(shown)})]


class ProbeExecute(Execute):
    tests_dir = Unicode("", help="the assignment's hidden tests (solutions/<id>/tests)").tag(config=True)
    partial_credit = List(Unicode(), help="test cells scored by the share of their checks that pass").tag(config=True)
    record = Bool(False, help="keep each probe's observations (the reference's expected values)").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None
        self._job = JobSettings.current()  # None outside a grader's job: no deadline, no measurement
        self._measurement = self._job.measurement if self._job else None
        self._deadline = self._job.deadline if self._job else None
        self._tests = hidden_tests.load(self.tests_dir) if self.tests_dir else {}
        self._expected = {} if self.record else hidden_tests.read_expected(self.tests_dir).get("tests", {})
        self.recorded, self.problems, self.notes = {}, [], []
        return super().preprocess(nb, resources, km)

    async def _check_raise_for_error(self, cell, cell_index, exec_reply):
        """A cell whose reply says "error" fails even when its error output never arrived (outputs
        come on another channel and may be late on a loaded machine)."""
        content = (exec_reply or {}).get("content", {})
        if content.get("status") == "error" and not any(o.get("output_type") == "error"
                                                        for o in cell.get("outputs", [])):
            cell.setdefault("outputs", []).append(_error(str(content.get("ename") or "Error"),
                                                         str(content.get("evalue") or "")))
        return await super()._check_raise_for_error(cell, cell_index, exec_reply)

    def _run_hidden(self, source: str, index: int) -> list:
        """Execute code outside the notebook's input history; returns its outputs."""
        step = NotebookNode(cell_type="code", source=source, metadata={}, outputs=[], execution_count=None)
        original = self.nb.cells[index]
        try:
            self.execute_cell(step, index, store_history=False)
        finally:
            self.nb.cells[index] = original
        return step.outputs

    def _note(self, line: str, name: str) -> None:
        state = self._job.state if self._job else None
        if state:
            os.makedirs(state, exist_ok=True)
            with open(os.path.join(state, name), "a") as handle:
                handle.write(line + "\n")

    def _stop(self, code: str, reason: str) -> None:
        """Run no more cells; ``stopped.txt`` gets the code (for the status) and the reason (for people)."""
        self._stopped = reason
        self._note(f"{code} {reason}", "stopped.txt")

    def _check_timeout(self, outputs: list) -> bool:
        if any(o.get("output_type") == "error" and o.get("ename") in STOPPING_ERRORS for o in outputs):
            # nothing else runs in this kernel: it may still be looping (nbclient kills it at cleanup)
            self._stop("cell-timeout", f"an earlier cell ran past the {self.timeout} s per-cell limit")
            return True
        return False

    def _verdict(self, name: str | None, grade_id: str, index: int) -> tuple[hidden_tests.Verdict, list]:
        """(the verdict of one test cell, the probe step's other outputs)."""
        test = self._tests.get(name or "")
        if test is None:
            return hidden_tests.Verdict(0.0, [f"{grade_id}: this check has no hidden test in the course "
                                              "(tell the course staff)"]), []
        expected = self._expected.get(name)
        if test.measured_by is not None:
            return hidden_tests.judge(test, None, expected, grade_id, measurement=self._measurement), []
        nonce = 0 if self.record else secrets.randbits(31)   # drawn here, after the notebook's own cells ran
        payload = (f"__import__('autograder.kernel.probe', fromlist=['run']).run({name!r}, "
                   f"{test.kernel_source!r}, {nonce})")
        outputs = self._run_hidden(payload, index)
        report, why, rest = take_report(outputs)
        if self.record:
            self._keep(name, report, why)
        if self._check_timeout(outputs):
            return hidden_tests.Verdict(0.0, [f"{test.title}: the checks ran past the {self.timeout} s per-cell limit"],
                                        cause="CellTimeoutError"), rest
        if why is None:
            report["nonce"] = nonce  # the grader's own, over anything the kernel sent
        if test.task_functions and why is None:
            hidden_tests.observe_task(test, report, self._task_runner(test))
        measurement = self._measurement
        if test.evaluated_with is not None and not self.record and why is None:
            measurement = self._evaluate(name, test, report)
        return hidden_tests.judge(test, report if why is None else why, expected, grade_id,
                                  partial=grade_id in self.partial_credit, measurement=measurement), rest

    def _task_runner(self, test: hidden_tests.HiddenTest):
        """Runs the student's task functions apart (``grading.task_process``), sandboxed like an evaluator."""
        from autograder.grading.task_process import TaskRunner, task_source

        cells = [cell.source for cell in self.nb.cells
                 if cell.metadata.get("nbgrader", {}).get("grade_id") in getattr(test.module, "TASK_CELLS", ())]
        try:
            source = task_source(cells, test.task_functions)
        except SyntaxError as error:
            source = f"raise SyntaxError({f'your task cells are not valid Python (line {error.lineno})'!r})\n"
        if self._job is None or self.record:
            return TaskRunner(source, "none", None)
        return TaskRunner(source, self._job.task_sandbox, self._job.task_uid)

    def _evaluate(self, name: str, test: hidden_tests.HiddenTest, report: dict) -> dict:
        """A measurement the grader makes outside the kernel, from what the probe reported (a task the
        student designed) and the submitted artifact: the executor asks the grader's evaluator pool
        (``grading.measure_on_request``); the kernel never reports the measured values."""
        from autograder.grading import measure_on_request

        if self._job is None:
            return {"error": "no grader-side evaluator is set up for this check (plain nbgrader?)"}
        try:
            inputs = test.module.evaluation_inputs(hidden_tests.decoded(report))
        except Exception as error:  # noqa: BLE001 - the probe's report could not give the inputs
            why = str(error)[:200] if isinstance(error, ValueError) else type(error).__name__
            return {"error": f"the notebook's task could not be read ({why})"}
        until = self._deadline if self._deadline is not None else time.time() + 1800
        return measure_on_request.ask(self._job.state, name, inputs, until)

    def _keep(self, name: str, report: dict | None, why: str | None) -> None:
        if report is None or report.get("error"):
            self.problems.append(f"{name}: the reference's probe failed: {why or report.get('error')}")
        else:
            self.recorded[name] = report["observations"]

    def _run_test(self, cell, index: int):
        meta = cell.metadata.get("nbgrader", {})
        grade_id, points = meta.get("grade_id", ""), float(meta.get("points", 0) or 0)
        visible, _, hidden = cell.source.partition(HIDDEN_BEGIN)
        shown = self._run_hidden(visible, index) if visible.strip() else []
        if self.record and any(o.get("output_type") == "error" for o in shown):  # an artifact's check, say
            self.notes.append(f"{grade_id}: the reference's visible checks failed here (no artifacts?)")
        if self._check_timeout(shown):
            verdict = hidden_tests.Verdict(0.0, [f"the visible checks ran past the {self.timeout} s per-cell limit"],
                                           cause="CellTimeoutError")
            rest = []
        else:
            verdict, rest = self._verdict(hidden_tests.named_in(hidden), grade_id, index)
        cell.outputs = as_text(shown + rest) + verdict_outputs(verdict, points)
        return cell

    def _record_score(self, cell) -> None:
        """The test cell's score, as nbgrader will compute it, kept in case the job is killed."""
        from nbgrader.utils import determine_grade

        meta = cell.metadata.get("nbgrader", {})
        try:
            score, _ = determine_grade(cell)
        except Exception:  # noqa: BLE001 - no score is no points
            score = 0.0
        self._note(json.dumps({"grade_id": meta.get("grade_id"), "score": float(score or 0.0)}), "progress.jsonl")

    def preprocess_cell(self, cell, resources, index):
        self._check_assign_resources(resources)
        if not self._stopped and self._deadline is not None and time.time() > self._deadline:
            self._stop("notebook-timeout", "the notebook ran past its time limit for the whole notebook")
        if self._stopped:
            if cell.cell_type == "code":
                cell.outputs = [_error("NotRun", f"not run: {self._stopped}")]
            return cell, self.resources
        try:
            if _is_test(cell):
                cell = self._run_test(cell, index)
            else:
                cell = self.execute_cell(cell, index, store_history=True)
                if cell.cell_type == "code":  # a forged observations message outside a probe step: dropped
                    cell.outputs = [o for o in cell.get("outputs", []) if MIME not in o.get("data", {})]
                    self._check_timeout(cell.outputs)
        except DeadKernelError:
            died = _error("DeadKernelError", "the kernel died while running this cell")
            cell.outputs = list(cell.get("outputs", [])) + [died]
            self._stop("dead-kernel", "the kernel died in an earlier cell")
        if _is_test(cell):
            self._record_score(cell)
        return cell, self.resources


class CapOutput(NbGraderPreprocessor):
    """Truncate outputs to ``max_chars`` characters per output and ``max_outputs`` per cell."""

    max_chars = Integer(20000).tag(config=True)
    max_outputs = Integer(50).tag(config=True)

    def _cap(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        return text[: self.max_chars] + f"\n... output truncated ({len(text):,} characters) ..."

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        outputs = cell.get("outputs", [])
        if len(outputs) > self.max_outputs:
            kept = [o for o in outputs if o.get("output_type") in ("error", "execute_result")
                    or VERDICT in o.get("metadata", {})]
            note = f"... {len(outputs) - self.max_outputs} more outputs truncated ...\n"
            outputs = outputs[: self.max_outputs] + [_text(note)]
            outputs += [o for o in kept if o not in outputs]
        for output in outputs:
            if output.get("output_type") == "stream":
                output["text"] = self._cap(output.get("text", ""))
            elif output.get("output_type") in ("execute_result", "display_data"):
                data = output.get("data", {})
                for mime, value in list(data.items()):
                    if isinstance(value, str) and mime.startswith("text/"):
                        data[mime] = self._cap(value)
                    elif isinstance(value, str) and len(value) > 20 * self.max_chars:
                        del data[mime]  # a giant image or blob: drop it
                if not data:
                    data["text/plain"] = "(output too large, removed)"
            elif output.get("output_type") == "error":
                output["evalue"] = self._cap(str(output.get("evalue", "")))[:2000]
                output["traceback"] = [self._cap(line)[:5000] for line in output.get("traceback", [])[-40:]]
        cell.outputs = outputs
        return cell, resources
