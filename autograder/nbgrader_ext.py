"""nbgrader preprocessors the grader puts into ``nbgrader autograde`` (see course.COURSE_CONFIG).

- :class:`GuardedExecute` replaces nbgrader's ``Execute``. Before each autograded test cell it
  (1) runs ``kernel_guard.restore()`` in the kernel and (2) sends a probe: the test cell's own
  source behind a first line that raises. The grader checks *from outside the kernel* that the
  restore answered and that the probe was reported as an error; if not, the notebook changed
  how the kernel reports failures, and the test cell is marked failed without running.
  After a cell times out or the kernel dies, no further cell runs: every later cell gets an
  error output saying why, so tests that never ran cannot score, and tests before keep their
  points.
- :class:`CapOutput` bounds every output (characters and lines), so a cell printing megabytes
  does not blow up the autograded notebook, the gradebook or the feedback page.
"""
from __future__ import annotations

import os
import secrets

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Integer

RESTORE_CODE = "__import__('sys').modules['autograder.kernel_guard'].restore()"


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


class GuardedExecute(Execute):
    guard = Bool(True, help="restore pristine state and probe error reporting before each test cell").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None
        return super().preprocess(nb, resources, km)

    def _run_hidden(self, source: str, index: int):
        """Execute code the student never sees; returns (outputs, reply status)."""
        probe = NotebookNode(cell_type="code", source=source, metadata={}, outputs=[], execution_count=None)
        original = self.nb.cells[index]
        try:
            self.execute_cell(probe, index, store_history=False)
        finally:
            self.nb.cells[index] = original
        return probe.outputs

    def _integrity(self, cell, index: int) -> str | None:
        """None when the kernel can be trusted to grade this cell, else the reason it cannot."""
        outputs = self._run_hidden(RESTORE_CODE, index)
        texts = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in outputs)
        if "autograder-guard-ok" not in texts:
            return "the grading guard did not answer (the notebook tampered with the kernel)"
        if "repaired" in texts:
            repaired = texts.split("repaired", 1)[1].strip().strip("'\"")
            self.log.warning("guard before %s: repaired %s", cell.metadata.nbgrader.get("grade_id"), repaired)
            state = os.environ.get("AUTOGRADER_STATE_DIR")
            if state:
                os.makedirs(state, exist_ok=True)
                with open(os.path.join(state, "guard.txt"), "a") as handle:
                    handle.write(repaired + "\n")
        token = secrets.token_hex(8)
        source = cell.source
        probe = f"raise AssertionError('probe {token}')\n" + ("" if source.lstrip().startswith("%%") else source)
        outputs = self._run_hidden(probe, index)
        if not any(o.get("output_type") == "error" and token in str(o.get("evalue", "")) for o in outputs):
            return "a failing check was not reported as a failure (the notebook changed how errors are reported)"
        return None

    def preprocess_cell(self, cell, resources, index):
        self._check_assign_resources(resources)
        if self._stopped:
            if cell.cell_type == "code":
                cell.outputs = [_error("NotRun", f"not run: {self._stopped}")]
            return cell, self.resources
        try:
            if self.guard and _is_test(cell):
                problem = self._integrity(cell, index)
                if problem:
                    cell.outputs = [_error("IntegrityError", problem)]
                    return cell, self.resources
            cell = self.execute_cell(cell, index, store_history=True)
        except DeadKernelError:
            cell.outputs = list(cell.get("outputs", [])) + [_error("DeadKernelError", "the kernel died while running this cell")]
            self._stopped = "the kernel died in an earlier cell"
            return cell, self.resources
        if any(o.get("output_type") == "error" and o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
            # nothing else runs in this kernel: it may still be looping (nbclient kills it at cleanup)
            self._stopped = f"an earlier cell ran past the {self.timeout} s per-cell limit"
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
            errors = [o for o in outputs if o.get("output_type") == "error"]
            outputs = outputs[: self.max_outputs] + [NotebookNode(output_type="stream", name="stdout",
                                                                  text=f"... {len(outputs) - self.max_outputs} more outputs truncated ...\n")]
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
