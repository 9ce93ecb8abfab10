"""nbgrader preprocessors the grader puts into ``nbgrader autograde`` (see ``autograder.nbconfig``).

- :class:`GuardedExecute` replaces nbgrader's ``Execute``. It writes a fresh key to
  ``AUTOGRADER_GUARD_KEYFILE`` before the kernel starts (the kernel reads and deletes it, then
  seals its guard: see ``kernel_guard``), asks the guard to record the kernel's threads and
  objects before the first cell, and for each autograded test cell:

  1. sends a probe, the test cell's own source behind a first line that raises, and checks *from
     outside the kernel* that it is reported as an error;
  2. runs the test cell with ``__autograder_guard__ = "<nonce>"`` in front of it, another such
     line just before ``### BEGIN HIDDEN TESTS`` (the visible part calls the student's code, which
     may patch things again) and a last one at its end (a check that passed must reach it with the
     result-reporting machinery intact). Executing that line makes the sealed guard restore everything
     and print a status signed with the key; the executor checks the signatures and nonces and
     removes the lines from the output.

  Test cells run with ``store_history=False``: their source (hidden part included) never enters
  IPython's input history, so ``In``, ``_ih``, ``_i``/``_ii``/``_iii``, ``%history`` and the
  history database in a later student cell hold student cells only.

  No valid reply, a "tampered" status or a failed probe: the cell is marked failed
  (``IntegrityError``) and earns nothing -- unless the kernel ran out of memory meanwhile, which is
  reported as a ``MemoryError``, not as tampering. After a cell times out, the kernel dies or the
  whole notebook passes its time limit (``AUTOGRADER_NOTEBOOK_DEADLINE``), no further cell runs:
  every later cell gets an error output saying why, so tests that never ran cannot score, tests
  before keep their points, and the reason is written to ``stopped.txt`` in the grader's state
  folder. Each test cell's score is appended to ``progress.jsonl`` there as soon as it is known,
  so a job killed at the hard time limit still has its earned points.

  A test cell whose hidden part holds the line ``GRADER_MEASUREMENT = None  # ...`` gets the
  grader's own measurement there (``AUTOGRADER_GRADER_MEASUREMENT``, JSON, set by the grader for
  this job only) just before it runs: student cells cannot change a cell's source, and the kernel's
  environment never holds it.
  A test cell scores by its error outputs alone (:func:`scored_by_errors`): a result the student's
  code displays mid-test counts for nothing.
- :class:`CapOutput` bounds every output (characters and lines), so a cell printing megabytes
  does not blow up the autograded notebook, the gradebook or the feedback page.
"""
from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import time

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Integer

from autograder.kernel.guard import MARK, MARK_BASELINE, REPLY, signature

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
MEASUREMENT_SLOT = re.compile(r"^(?P<indent>[ \t]*)GRADER_MEASUREMENT = None\b.*$", re.MULTILINE)
MEASUREMENT_VARIABLE = "AUTOGRADER_GRADER_MEASUREMENT"
DEADLINE_VARIABLE = "AUTOGRADER_NOTEBOOK_DEADLINE"
STATE_VARIABLE = "AUTOGRADER_GRADER_STATE"
MEMORY_ERRORS = ("MemoryError", "OutOfMemoryError")
REPLY_LINE = re.compile(rf"^{REPLY} (\S+) (\S+) ([0-9a-f]{{64}})\n?", re.MULTILINE)


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _is_test(cell) -> bool:
    return cell.cell_type == "code" and bool(is_grade(cell)) and not is_solution(cell)


def with_measurement(source: str, measurement: str | None) -> str:
    """``source`` with the grader's measurement (JSON text) in its measurement slot, if it has one."""
    if not measurement:
        return source
    literal = f"__import__('json').loads({measurement!r})"
    return MEASUREMENT_SLOT.sub(lambda m: f"{m.group('indent')}GRADER_MEASUREMENT = {literal}", source, count=1)


def _out_of_memory(outputs: list) -> bool:
    return any(o.get("output_type") == "error" and o.get("ename") in MEMORY_ERRORS for o in outputs)


def scored_by_errors(outputs: list) -> list:
    """A test cell's outputs with every ``execute_result`` made a ``display_data`` (same content,
    still shown), so the cell scores by its errors alone.

    nbgrader scores a test cell by its *first* ``execute_result`` or error: a non-numeric result
    is full credit, even when an ``AssertionError`` follows it. The student's function runs inside
    the test cell, so a call of IPython's display hook from it (``get_ipython().displayhook('ok')``)
    put such a result before the failing assert and scored every failing test as passed. nbgrader's
    partial credit (a test cell's last expression) cannot occur here anyway: every test cell ends
    with the guard's trigger line."""
    for output in outputs:
        if output.get("output_type") == "execute_result":
            output["output_type"] = "display_data"
            output.pop("execution_count", None)
    return outputs


def strip_replies(outputs: list) -> tuple[list, list[tuple[str, str, str]]]:
    """Remove guard replies from stream outputs; returns (outputs, [(nonce, status, mac)])."""
    found, kept = [], []
    for output in outputs:
        if output.get("output_type") == "stream" and REPLY in output.get("text", ""):
            text = output["text"]
            found += REPLY_LINE.findall(text)
            text = REPLY_LINE.sub("", text)
            if text.strip("\n") == "":
                continue
            output["text"] = text.lstrip("\n") if text.startswith("\n") else text
        kept.append(output)
    return kept, found


class GuardedExecute(Execute):
    guard = Bool(True, help="restore pristine state and probe error reporting before each test cell").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None
        self._baseline_sent = False
        self._measurement = os.environ.get(MEASUREMENT_VARIABLE) or None
        self._deadline = float(os.environ.get(DEADLINE_VARIABLE) or 0) or None
        self._key = secrets.token_hex(32).encode()
        keyfile = os.environ.get("AUTOGRADER_GUARD_KEYFILE")
        if keyfile and self.guard:
            with open(keyfile, "wb") as handle:
                os.fchmod(handle.fileno(), 0o600)
                handle.write(self._key)
        return super().preprocess(nb, resources, km)

    async def _check_raise_for_error(self, cell, cell_index, exec_reply):
        """A cell whose reply says "error" fails even when its error output never arrived (outputs
        come on another channel and may be late on a loaded machine): nbgrader grades outputs."""
        content = (exec_reply or {}).get("content", {})
        if content.get("status") == "error" and not any(o.get("output_type") == "error"
                                                        for o in cell.get("outputs", [])):
            cell.setdefault("outputs", []).append(_error(str(content.get("ename") or "Error"),
                                                         str(content.get("evalue") or "")))
        return await super()._check_raise_for_error(cell, cell_index, exec_reply)

    def _run_hidden(self, source: str, index: int):
        """Execute code the student never sees; returns its outputs."""
        probe = NotebookNode(cell_type="code", source=source, metadata={}, outputs=[], execution_count=None)
        original = self.nb.cells[index]
        try:
            self.execute_cell(probe, index, store_history=False)
        finally:
            self.nb.cells[index] = original
        return probe.outputs

    def _note(self, line: str, name: str = "guard.txt") -> None:
        state = os.environ.get(STATE_VARIABLE)
        if state:
            os.makedirs(state, exist_ok=True)
            with open(os.path.join(state, name), "a") as handle:
                handle.write(line + "\n")

    def _record_score(self, cell) -> None:
        """The test cell's score, as nbgrader will compute it, kept in case the job is killed."""
        from nbgrader.utils import determine_grade

        meta = cell.metadata.get("nbgrader", {})
        try:
            score, _ = determine_grade(cell)
        except Exception:  # noqa: BLE001 - no score is no points
            score = 0.0
        self._note(json.dumps({"grade_id": meta.get("grade_id"), "score": float(score or 0.0)}), "progress.jsonl")

    def _stop(self, reason: str) -> None:
        self._stopped = reason
        self._note(reason, "stopped.txt")

    def _probe(self, cell, index: int) -> str | None:
        """None when a failing check is reported as a failure, else the reason it is not."""
        token = secrets.token_hex(8)
        source = cell.source
        probe = f"raise AssertionError('probe {token}')\n" + ("" if source.lstrip().startswith("%%") else source)
        outputs = self._run_hidden(probe, index)
        if _out_of_memory(outputs):
            return "MemoryError"
        if not any(o.get("output_type") == "error" and token in str(o.get("evalue", "")) for o in outputs):
            return "a failing check was not reported as a failure (the notebook changed how errors are reported)"
        return None

    def _run_test(self, cell, index: int):
        """Run a test cell behind the guard's triggers (at its start and again just before its
        hidden part, after the visible part ran the student's code); returns the cell with the
        replies checked."""
        nonce = secrets.token_hex(16)
        trigger = f'{MARK} = "{nonce}"'
        nonces = [nonce]
        if cell.source.lstrip().startswith("%%"):  # a cell magic must stay first: trigger just before
            outputs = self._run_hidden(trigger, index)
            _, replies = strip_replies(outputs)
            cell = self.execute_cell(cell, index, store_history=False)
        else:
            source = with_measurement(cell.source, self._measurement)
            lines = source.split("\n")
            hidden = next((i for i, line in enumerate(lines) if line.startswith(HIDDEN_BEGIN)), None)
            if hidden is not None and hidden > 0:
                second = secrets.token_hex(16)
                lines.insert(hidden, f'{MARK} = "{second}"')
                nonces.append(second)
            # and once more at the very end: a check that passed must reach it, with the machinery
            # intact. Student code called late in the hidden part could otherwise replace
            # Session.send to drop the error and report "ok", then put it back (2026-11-27 probe)
            last = secrets.token_hex(16)
            lines.append(f'{MARK} = "{last}"')
            nonces.append(last)
            source = "\n".join(lines)
            marked = NotebookNode({**cell, "source": trigger + "\n" + source, "outputs": []})
            original = self.nb.cells[index]
            try:
                marked = self.execute_cell(marked, index, store_history=False)  # never in `In`/`_ih`
            finally:
                self.nb.cells[index] = original
            cell.outputs = marked.get("outputs", [])
            cell.execution_count = marked.get("execution_count")
            cell.outputs, replies = strip_replies(cell.outputs)
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        statuses = []
        for expected in nonces:
            mine = [(status, mac) for n, status, mac in replies if n == expected]
            if mine and hmac.compare_digest(mine[0][1], signature(self._key, expected, mine[0][0])):
                statuses.append(mine[0][0].replace("%0A", " ").replace("%20", " ").replace("%25", "%"))
            elif _out_of_memory(cell.outputs):  # a starved kernel cannot answer: not the student's tampering
                cell.outputs = [_error("MemoryError", "the kernel ran out of memory during this check")]
                return cell
            elif expected == nonces[0] or not errors:  # the visible part may fail before the hidden trigger
                cell.outputs = [_error("IntegrityError", "the grading guard did not answer for this check "
                                                         "(the notebook tampered with the kernel)")]
                return cell
        tampered = [s.split(":", 1)[1] for s in statuses if s.startswith("tampered:")]
        repaired = [s.split(":", 1)[1] for s in statuses if s.startswith("repaired:")]
        if tampered:
            status = "tampered:" + ";".join(tampered)
        else:
            status = ("repaired:" + ";".join(repaired)) if repaired else "ok"
        if status.startswith("tampered:"):
            reasons = status.split(":", 1)[1].replace(";", ", ")
            self.log.warning("guard before %s: tampered %s", cell.metadata.nbgrader.get("grade_id"), reasons)
            self._note("tampered: " + reasons)
            cell.outputs = [_error("IntegrityError", "the notebook changed how the grader runs cells "
                                                     f"({reasons[:300]}); this check was not trusted")]
        elif status.startswith("repaired:"):
            repaired = status.split(":", 1)[1].replace(";", ", ")
            self.log.warning("guard before %s: repaired %s", cell.metadata.nbgrader.get("grade_id"), repaired)
            self._note(repaired)
        return cell

    def preprocess_cell(self, cell, resources, index):
        self._check_assign_resources(resources)
        if not self._stopped and self._deadline is not None and time.time() > self._deadline:
            self._stop("the notebook ran past its time limit for the whole notebook")
        if self._stopped:
            if cell.cell_type == "code":
                cell.outputs = [_error("NotRun", f"not run: {self._stopped}")]
            return cell, self.resources
        try:
            cell = self._execute(cell, index)
        except DeadKernelError:
            died = _error("DeadKernelError", "the kernel died while running this cell")
            cell.outputs = list(cell.get("outputs", [])) + [died]
            self._stop("the kernel died in an earlier cell")
        else:
            outputs = cell.get("outputs", [])
            if any(o.get("output_type") == "error" and o.get("ename") == "CellTimeoutError" for o in outputs):
                # nothing else runs in this kernel: it may still be looping (nbclient kills it at cleanup)
                self._stop(f"an earlier cell ran past the {self.timeout} s per-cell limit")
        if _is_test(cell):
            cell.outputs = scored_by_errors(cell.get("outputs", []))
            if self.guard:
                self._record_score(cell)
        return cell, self.resources

    def _execute(self, cell, index: int):
        if self.guard and not self._baseline_sent:
            self._baseline_sent = True  # before the notebook's first cell: threads, objects
            self._run_hidden(f"{MARK_BASELINE} = 1", index)
        if self.guard and _is_test(cell):
            problem = self._probe(cell, index)
            if problem == "MemoryError":
                cell.outputs = [_error("MemoryError", "the kernel ran out of memory before this check could run")]
            elif problem:
                cell.outputs = [_error("IntegrityError", problem)]
            else:
                cell = self._run_test(cell, index)
            return cell
        cell = self.execute_cell(cell, index, store_history=True)
        if cell.cell_type == "code":  # a markdown cell with `outputs` is invalid nbformat (formgrader refuses it)
            cell.outputs, _ = strip_replies(cell.get("outputs", []))
        return cell


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
            errors = [o for o in outputs if o.get("output_type") == "error"]
            note = f"... {len(outputs) - self.max_outputs} more outputs truncated ...\n"
            outputs = outputs[: self.max_outputs] + [NotebookNode(output_type="stream", name="stdout", text=note)]
            outputs += [o for o in errors if o not in outputs]
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
