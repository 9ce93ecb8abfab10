"""A hidden test's probe, run in the grading kernel: call the student's functions, report plain values.

The grader's executor sends each graded test cell's probe (the kernel part of
``solutions/<id>/tests/<test>.py``: its ``probe`` function and what that uses, never an expected
value, a reference function or a tolerance) and calls :func:`run`. The probe builds its inputs,
calls the notebook's functions through ``nb`` and records what they returned through
``observe``. :func:`run` sends the observations back as one display message of type
:data:`MIME`; the grader compares them with the reference's, outside this process.

Nothing here decides a point: a notebook that forges observations can only report values it
computed itself, and the grader never tells the kernel what it expects.
"""
from __future__ import annotations

import contextlib
import json
import sys
import warnings

MIME = "application/vnd.course-kit.observations.v1"
FAILED = type("Failed", (), {"__repr__": lambda self: "FAILED", "__bool__": lambda self: False})()
"""What ``observe`` returns when the call raised (the error is the observation)."""
MAX_ITEMS = 200_000
"""Numbers one probe may report in all: observations are sketches, not dumps."""


class Notebook:
    """The notebook's namespace as a probe sees it: ``nb.name`` is the student's object."""

    def __init__(self, namespace: dict):
        object.__setattr__(self, "_ns", namespace)

    def __getattr__(self, name: str):
        try:
            return self._ns[name]
        except KeyError:
            raise NameError(f"the notebook defines no `{name}`: run the cell that defines it and keep its "
                            "name as given") from None

    @contextlib.contextmanager
    def replaced(self, **stand_ins):
        """Notebook globals replaced while the block runs (stand-ins for the student's other TODOs)."""
        missing = object()
        saved = {name: self._ns.get(name, missing) for name in stand_ins}
        self._ns.update(stand_ins)
        try:
            yield self
        finally:
            for name, value in saved.items():
                if value is missing:
                    self._ns.pop(name, None)
                else:
                    self._ns[name] = value


class Observe:
    """``observe(label, fn, *args)`` calls ``fn`` and records its result (or its error) as plain values."""

    def __init__(self, nonce: int = 0):
        self.values: dict[str, object] = {}
        self.budget = MAX_ITEMS
        self.nonce = nonce
        """A number the grader drew for this run (0 when recording the reference): a probe that derives inputs
        from it asks for values the kernel could not know before the probe ran; the judge knows it too."""

    def __call__(self, label: str, fn, *args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except KeyboardInterrupt:  # the executor's timeout: the cell must stop
            raise
        except BaseException as error:  # noqa: BLE001 - SystemExit from a student's function is an answer too
            self.values[label] = error_value(error)
            return FAILED
        self.values[label] = self.plain(result)
        return result

    def value(self, label: str, value):
        """Record a value the probe computed itself (a count, a flag, the input after the call)."""
        self.values[label] = self.plain(value)
        return value

    def sketch(self, label: str, tensor, size: int = 16):
        """Record a large tensor (a gradient over many weights) by its projections on ``size`` fixed
        random directions and its norm: as telling as the whole for a comparison, and small."""
        self.values[label] = self.plain(sketch(tensor, size))
        return tensor

    def plain(self, value, depth: int = 0):
        """JSON-ready description of ``value``: numbers, strings, arrays with dtype and shape, containers.
        What passes the probe's budget of numbers is reported by its type and size only."""
        if depth > 12 or self.budget <= 0:
            return {"type": "object", "class": "too deeply nested" if depth > 12 else "past the size limit"}
        self.budget -= 1
        if value is None or isinstance(value, (bool, int, float, str)):
            kind = type(value).__name__ if type(value) in (bool, int, float, str) else _base_name(value)
            return {"type": kind, "value": _builtin(value)[:100_000] if isinstance(value, str) else _builtin(value)}
        size = _array_size(value)
        if size is not None:
            if size > self.budget:
                return {"type": "object", "class": f"an array of {size} numbers (too large to report)"}
            self.budget -= size
            return self._array(_as_array(value))
        if isinstance(value, (list, tuple)):
            return {"type": "list" if isinstance(value, list) else "tuple",
                    "items": [self.plain(v, depth + 1) for v in list(value)[:10_000]]}
        if isinstance(value, dict):
            return {"type": "dict", "items": {str(k): self.plain(v, depth + 1) for k, v in list(value.items())[:1000]}}
        return {"type": "object", "class": type(value).__qualname__, "repr": _short(value)}

    @staticmethod
    def _array(found: tuple) -> dict:
        library, dtype, shape, flat = found
        return {"type": "array", "library": library, "dtype": dtype, "shape": list(shape), "values": flat}


def _array_size(value) -> int | None:
    """How many numbers a tensor or numeric array holds (None: not one), read before converting it."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return int(torch.Tensor.numel(value))
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        return int(numpy.asarray(value).size) if numpy.asarray(value).dtype.kind in "biuf" else None
    return None


def _builtin(value):
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return None


def _base_name(value) -> str:
    return next(k.__name__ for k in (bool, int, float, str) if isinstance(value, k)) if value is not None else "none"


def _short(value) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # noqa: BLE001 - a repr that raises is still an object
        return "<no repr>"


def _as_array(value):
    """(library, dtype, shape, flat list) of a tensor or numpy array or scalar, else None."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        # the tensor's own data, read through the class (an attribute set on the object is not its data)
        tensor = torch.Tensor.to(torch.Tensor.detach(value), "cpu").as_subclass(torch.Tensor)
        dtype = str(tensor.dtype).removeprefix("torch.")
        if tensor.dtype in (torch.bfloat16, torch.float16):
            tensor = tensor.float()
        return "torch", dtype, tuple(tensor.shape), tensor.reshape(-1).tolist()
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        array = numpy.asarray(value)
        if array.dtype.kind not in "biuf":
            return None
        return "numpy", str(array.dtype), tuple(array.shape), array.reshape(-1).tolist()
    return None


def sketch(tensor, size: int = 16):
    """[norm, then the projections on ``size`` directions drawn from a fixed seed] of a tensor or
    array, as an array of its own precision (float64 stays float64, anything else is float32)."""
    import numpy

    found = _as_array(tensor)
    flat = numpy.asarray(found[3] if found else tensor, dtype=numpy.float64).reshape(-1)   # (n,)
    directions = numpy.random.default_rng(20261128).standard_normal((size, flat.size))     # (size, n)
    values = numpy.array([numpy.linalg.norm(flat), *(directions @ flat)])                  # (1 + size,)
    return values if found is not None and found[1] == "float64" else values.astype(numpy.float32)


def error_value(error: BaseException) -> dict:
    return {"type": "error", "error": type(error).__name__, "message": str(error)[:500]}


_PRISTINE: dict[str, dict] = {}
"""Module name -> its attributes when the grading kernel started (``remember_pristine``)."""


def remember_pristine() -> None:
    """At kernel start (``kernel.start_kernel``): builtins' and numpy's own attributes, lent back to probes."""
    import builtins

    import numpy

    _PRISTINE.update(builtins=dict(vars(builtins)), numpy=dict(vars(numpy)))


@contextlib.contextmanager
def _lent_back():
    """builtins and numpy as they were at kernel start while the probe runs (a notebook that replaced
    ``builtins.sum`` or ``np.mean`` for its own use), the notebook's versions put back after."""
    missing, changed = object(), []
    for name, pristine in _PRISTINE.items():
        current = vars(sys.modules[name])
        edits = {k: current.get(k, missing) for k, v in pristine.items() if current.get(k, missing) is not v}
        changed.append((current, edits))
        current.update({k: pristine[k] for k in edits})
    try:
        yield
    finally:
        for current, edits in changed:
            for key, value in edits.items():
                if value is missing:
                    current.pop(key, None)
                else:
                    current[key] = value


@contextlib.contextmanager
def fresh_defaults():
    """What a notebook may have changed for its own use, reset while the probe runs and put back after:
    torch's grad mode and default dtype, numpy's error mode, replaced builtins and numpy functions.
    An honest notebook's mistake costs it nothing here; none of this is a defence (the sandbox is)."""
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    saved_np = numpy.seterr(all="ignore") if numpy is not None else None
    saved_torch = (torch.is_grad_enabled(), torch.get_default_dtype()) if torch is not None else None
    if torch is not None:
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)
    try:
        with _lent_back(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        if numpy is not None:
            numpy.seterr(**saved_np)
        if torch is not None:
            torch.set_grad_enabled(saved_torch[0])
            torch.set_default_dtype(saved_torch[1])


def observe_probe(name: str, source: str, namespace: dict, nonce: int = 0) -> dict:
    """Run the probe in ``source`` against ``namespace``; {"observations": ..., "error": ...}."""
    observe = Observe(nonce)
    report = {"test": name, "observations": observe.values, "error": None}
    module = {"__name__": f"hidden_test_{name}"}
    with fresh_defaults():
        try:
            exec(compile(source, f"<hidden test {name}>", "exec"), module)  # noqa: S102 - the grader's own code
            module["probe"](Notebook(namespace), observe)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - reported, and the grader says what did not run
            report["error"] = error_value(error)
    return report


def run(name: str, source: str, nonce: int = 0) -> None:
    """Called by the grader's executor in the test cell's place: observe, then send one message."""
    from IPython import get_ipython
    from IPython.display import publish_display_data

    report = observe_probe(name, source, get_ipython().user_ns, nonce)
    publish_display_data({MIME: json.dumps(report, allow_nan=True)})


def hidden_test(assignment: str, name: str, grade_id: str | None = None) -> None:
    """What a test cell's hidden part calls. The kit's grader replaces the call with :func:`run` of
    the probe; this body runs only under plain ``nbgrader autograde`` (no sandbox, so no
    protection against a hostile notebook: docs/GRADING.md), where it finds the hidden test in
    the course kit's ``solutions/`` and judges here, with the grader's own comparison."""
    from IPython import get_ipython

    try:
        from autograder.grading import hidden_tests
    except ImportError:
        raise AssertionError("this check needs the course kit's grader (python -m autograder autograde)") from None
    verdict = hidden_tests.judge_in_process(assignment, name, get_ipython().user_ns, observe_probe, grade_id, InProcess)
    for line in verdict.notes:
        print(line)
    if verdict.failures:
        raise AssertionError("\n".join(verdict.failures))


class InProcess:
    """Plain nbgrader: a test's task calls (``grading.task_process``) on the notebook's own functions, in the
    notebook's process."""

    def __init__(self, namespace: dict):
        self.namespace = namespace

    def call(self, name: str, calls: list[tuple]) -> list[dict]:
        observe, results = Observe(), []
        for args in calls:
            try:
                results.append(observe.plain(self.namespace[name](*args)))
            except Exception as error:  # noqa: BLE001 - an error is the observation
                results.append(error_value(error))
        return results
