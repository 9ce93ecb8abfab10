"""Unit tests of the grading kernel's pieces: the guard (in an in-process IPython shell), the
memory watchdog, the notebook repair. Fast: no nbgrader, no kernels."""
from __future__ import annotations

import builtins
import subprocess
import sys

import nbformat
import pytest


@pytest.fixture()
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    from autograder.kernel import guard as kernel_guard

    ip = InteractiveShell.instance()
    kernel_guard.install(ip)
    yield ip
    kernel_guard.restore()


def test_the_in_process_guard_leaves_the_host_threads_running(shell):
    """In-process, threads started after install are the host's (pytest's): an idle executor
    worker that was sent the guard's never-returning stop hung pytest's exit (seen twice)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from autograder.kernel import guard as kernel_guard

    pool = ThreadPoolExecutor(max_workers=1)  # a library's executor, started after the guard's install
    pool.submit(int).result()
    assert "background thread" not in kernel_guard.restore()
    closing = threading.Thread(target=pool.shutdown, kwargs={"wait": True}, daemon=True)
    closing.start()
    closing.join(10)
    assert not closing.is_alive(), "the executor's worker was stopped: shutdown (and pytest's exit) would hang"


def test_guard_restores_patched_comparisons_builtins_and_aliases(shell):
    from autograder.kernel import guard as kernel_guard

    shell.run_cell(
        "import numpy as np, builtins, types\n"
        "np.allclose = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None\n"
        "builtins.print = lambda *a, **k: None\n"
        "def abs(x):\n    return 0\n"
        "class AssertionError(Exception):\n    pass\n"
        "F = np.zeros(2)\n"
        "math = types.SimpleNamespace(isclose=lambda *a, **k: True)\n"
        "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"
        "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n")
    line = kernel_guard.restore()
    assert line.startswith(kernel_guard.OK)
    for name in ("numpy.allclose", "numpy.testing.assert_allclose", "print", "'abs'", "'AssertionError'",
                 "'math'", "input_transformers_post", "custom exception handler"):
        assert name in line, line
    result = shell.run_cell("import numpy as np\nassert not np.allclose(0.0, 1.0)\nassert abs(-2) == 2\n"
                            "assert type(F).__name__ == 'ndarray'\nraise AssertionError('still raised')")
    assert type(result.error_in_exec) is builtins.AssertionError and str(result.error_in_exec) == "still raised"


def test_guard_records_torch_when_first_imported(shell):
    import torch  # noqa: F401  (pinned: a missing torch must fail, not skip)

    from autograder.kernel import guard as kernel_guard

    shell.run_cell("import torch\ntorch.allclose = lambda *a, **k: True\ntorch.Tensor.allclose = lambda *a, **k: True")
    line = kernel_guard.restore()
    assert "torch.allclose" in line and "Tensor.allclose" in line
    result = shell.run_cell("assert not torch.allclose(torch.zeros(1), torch.ones(1))\n"
                            "assert not torch.zeros(1).allclose(torch.ones(1))")
    assert result.success


def test_memory_watchdog_kills_and_marks(tmp_path):
    import psutil  # noqa: F401  (installed with ipykernel)
    hog = subprocess.Popen([sys.executable, "-c", "import time\nx = bytearray(400 * 2**20)\ntime.sleep(60)"])
    env_state = tmp_path / "state"
    watcher = subprocess.run([sys.executable, "-c",
                              "import os, sys; os.environ['AUTOGRADER_STATE_DIR'] = sys.argv[2]\n"
                              "from autograder.kernel.launcher import watch; watch(int(sys.argv[1]), 200)",
                              str(hog.pid), str(env_state)], timeout=60)
    assert watcher.returncode == 0
    assert hog.wait(timeout=10) != 0
    assert "200 MiB limit" in (env_state / "memory").read_text()


def test_repair_restores_deleted_retyped_and_duplicated_cells():
    from pathlib import Path

    from autograder.intake.repair import repair

    fixture = Path(__file__).parent / "fixtures" / "course" / "notebooks" / "toy_add" / "toy_add.ipynb"
    release = nbformat.read(fixture, as_version=4)
    student = nbformat.read(fixture, as_version=4)
    answer = next(c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "add")
    answer.source = "def add(a, b):\n    return a + b"
    student.cells = [c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_add"]
    extra = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade": True, "grade_id": "bonus", "points": 99,
                                                                      "solution": False, "locked": True,
                                                                      "schema_version": 3, "task": False}})
    student.cells.append(extra)
    fixed, notes = repair(student, release)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in fixed.cells]
    assert ids[: len(release.cells)] == [c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells]
    assert "return a + b" in fixed.cells[ids.index("add")].source
    assert any("test_add was deleted" in n for n in notes) and any("'bonus'" in n for n in notes)
    assert fixed.cells[-1].source == "x = 1" and "nbgrader" not in fixed.cells[-1].metadata


def test_an_error_reply_fails_the_cell_even_when_its_output_is_late():
    """nbgrader grades outputs; the error output travels on iopub and can miss nbclient's wait on
    a loaded machine. The reply's own status still makes the cell fail."""
    import asyncio

    from nbformat.v4 import new_code_cell
    from nbgrader.utils import determine_grade

    from autograder.grading.executor import GuardedExecute

    cell = new_code_cell("assert add(1, 2) == 3", metadata={"nbgrader": {
        "grade": True, "grade_id": "test_add", "points": 2, "solution": False, "locked": True, "schema_version": 3}})
    reply = {"content": {"status": "error", "ename": "AssertionError", "evalue": "add(1, 2) should be 3"}}
    asyncio.run(GuardedExecute(allow_errors=True)._check_raise_for_error(cell, 0, reply))
    assert [o["ename"] for o in cell.outputs] == ["AssertionError"]
    assert determine_grade(cell)[0] == 0
    asyncio.run(GuardedExecute(allow_errors=True)._check_raise_for_error(cell, 0, reply))
    assert len(cell.outputs) == 1  # an error output that did arrive is not doubled


def test_exact_refuses_lying_tensors_and_subclasses():
    import numpy as np
    import torch

    from autograder.kernel.exact import NotExact, exact_array, exact_tensor

    tensor = torch.tensor([1.0, 2.0])
    tensor.detach = lambda: torch.tensor([9.0, 9.0])  # an instance attribute hiding the method
    with pytest.raises(NotExact, match="'detach' was replaced"):
        exact_tensor(tensor)

    class Agree(np.ndarray):
        def __eq__(self, other):
            return True

    with pytest.raises(NotExact, match="no subclass"):
        exact_array(np.zeros(2).view(Agree))
    assert exact_array(torch.tensor([1.0], dtype=torch.bfloat16)).tolist() == [1.0]


def test_the_guard_knows_every_helpers_module():
    """A helpers module the guard does not record could be patched without being restored."""
    import pkgutil

    import helpers
    from autograder.kernel.guard import HELPERS_MODULES

    found = {"helpers"} | {f"helpers.{m.name}" for m in pkgutil.iter_modules(helpers.__path__)}
    assert set(HELPERS_MODULES) == found


def test_guard_restores_methods_of_model_classes(shell):
    """A notebook that patches a layer's or a model's class (not an instance) cannot change what a
    hidden test's fresh model computes (math_grpo's log-prob tests build one)."""
    import torch

    from autograder.kernel import guard as kernel_guard
    from helpers import lm

    path = lm.resolve_model("tiny", "Qwen/Qwen2.5-Math-1.5B")
    model_class = type(lm.load_model(path, quantize_4bit=False))
    shell.run_cell(f"import torch\nfrom transformers import {model_class.__name__} as M\n"
                   "M.forward = lambda self, *a, **k: None\n"
                   "torch.nn.Linear.forward = lambda self, x: x * 0\n")
    assert model_class.forward.__module__ == "__main__"
    line = kernel_guard.restore()
    assert f"{model_class.__name__}.forward" in line and "Linear.forward" in line, line
    assert model_class.forward.__module__ != "__main__"
    layer = torch.nn.Linear(2, 2)
    assert not torch.equal(layer(torch.ones(1, 2)), torch.zeros(1, 2))


_PROBE = """
import sys
from IPython.core.interactiveshell import InteractiveShell
from autograder.kernel import guard as kernel_guard
shell = InteractiveShell.instance()
kernel_guard.install(shell)
shell.run_cell(sys.argv[1])
print(kernel_guard.restore())
"""


@pytest.mark.parametrize("cell", [
    # transformers asks importlib.util.find_spec("torch") at import, before it imports torch
    "import transformers\nimport torch\ntorch.allclose = lambda *a, **k: True",
    "import importlib.util\nimportlib.util.find_spec('helpers')\nfrom helpers import toy_sort",
])
def test_asking_where_a_module_is_does_not_use_up_its_recording(cell):
    """A fresh kernel (nothing imported yet): a module first looked up and only then imported is
    still recorded on import, so the checks after it stay trusted (and a patch is still undone)."""
    line = subprocess.run([sys.executable, "-c", _PROBE, cell], capture_output=True, text=True,
                          check=True).stdout.strip().splitlines()[-1]
    assert line.startswith("autograder-guard-ok"), line
    assert "torch.allclose" in line or "torch" not in cell, line
