"""Exact built-in values from a student's result, for hidden tests.

A hidden test must never let a student's object run code while the expected value is in scope:
``float(x)``, ``np.asarray(x)``, ``x.tolist()`` or ``x == y`` all call methods the student's
class may define (``__float__``, ``__array__``, ``__array_ufunc__``, ``__torch_function__``,
``__eq__``), and such a method can read the caller's frame. So a hidden test converts first,
with these functions, and only then builds the expected value::

    from autograder.kernel.exact import exact_array
    got = exact_array(compute_expected_svf(p, p0, terminal, policy))   # plain float64 ndarray
    expected = ...                                                      # only now
    assert abs(got - expected).max() < 1e-6, "expected SVF: ..."

Each function accepts only objects whose type is exactly a built-in one (``float``,
``numpy.ndarray``, ``torch.Tensor``, ...), never a subclass, and reads them through the C-level
accessors of those exact types; anything else fails the check with an ``AssertionError`` that
names the type the student returned. The grading kernel records this module at start and
restores it before every test cell, like numpy and torch (see ``autograder.kernel.guard``).
Tensors are read through ``torch.Tensor``'s own methods called on the class, never through an
attribute of the student's object, and a tensor carrying an instance attribute that hides one of
those methods is refused.

In a grading kernel every public function here first asks the sealed guard to put back what the
student's code may have replaced while it ran (numpy, torch, builtins, this module; background
threads stopped): the student's function has returned by the time its result is converted, so
the comparison that follows runs on pristine functions. The request is a code object executed
with the real ``exec``, both held in a keyword default the guard does not let anyone replace.
Outside grading (a student's own kernel) the request is a no-op.
"""
from __future__ import annotations

import numpy as _np

# Executing this code object is how a grading kernel's sealed guard is asked to restore (see
# kernel_guard.MARK_INLINE); anywhere else it assigns a throwaway variable.
_GUARD = (exec, compile("__autograder_guard_inline__ = 1", "<autograder.kernel.exact>", "exec"))

_NUMPY_SCALARS = frozenset(
    t for t in set(_np.sctypeDict.values()) if issubclass(t, (_np.number, _np.bool_))
)
_PY_NUMBERS = frozenset((bool, int, float))
_ARRAY_KINDS = "biuf"  # bool, signed, unsigned, float: nothing that can hold a Python object


def _name(obj) -> str:
    """The type's qualified name, read without going through a metaclass the student wrote."""
    cls = type(obj)
    try:
        module = type.__dict__["__module__"].__get__(cls, type)
        qualname = type.__dict__["__qualname__"].__get__(cls, type)
        return f"{module}.{qualname}" if module not in ("builtins", None) else str(qualname)
    except Exception:  # noqa: BLE001 - a name is only for the message
        return "an unusual type"


class NotExact(AssertionError):
    """The student's value is not of an exact built-in type the check can read safely."""


def _fail(what: str, obj) -> NotExact:
    return NotExact(f"expected {what}, got {_name(obj)}: return a plain value (no subclass)")


def _torch():
    import sys

    return sys.modules.get("torch")


def _tensor_types(torch) -> tuple:
    return (torch.Tensor, torch.nn.Parameter)


def _no_torch_modes(torch) -> None:
    """A TorchFunctionMode or dispatch mode left active would intercept every tensor operation."""
    try:
        active = torch._C._len_torch_function_stack() + torch._C._len_torch_dispatch_stack()
    except AttributeError:  # an older torch without these counters
        active = 0
    if active:
        raise NotExact("a torch function or dispatch mode is active: close it before the check runs")


def _plain_tensor(obj, torch):
    """A detached CPU copy of an exact tensor, made with torch.Tensor's own methods called on the
    class: an instance attribute (``t.detach = ...``, tensors take any) is never looked up."""
    _no_torch_modes(torch)
    shadowing = [key for key in _instance_dict(obj) if callable(getattr(torch.Tensor, key, None))]
    if shadowing:
        raise NotExact(f"expected a plain tensor, got one whose {shadowing[0]!r} was replaced: return the tensor "
                       "your computation made")
    tensor = torch.Tensor.detach(obj)
    if torch.Tensor.is_complex(tensor):
        raise _fail("a real-valued tensor", obj)
    return torch.Tensor.clone(torch.Tensor.to(tensor, "cpu"))


def _instance_dict(obj) -> dict:
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return {}


def _tensor_to_array(obj, torch) -> _np.ndarray:
    tensor = _plain_tensor(obj, torch)
    if tensor.dtype in (torch.bfloat16, torch.float16):  # numpy has no bfloat16
        tensor = torch.Tensor.to(tensor, torch.float64)
    return torch.Tensor.numpy(tensor).copy()


def _exact_array(obj, dtype=float) -> _np.ndarray:
    """A new ``numpy.ndarray`` of ``dtype`` from an exact ndarray, Tensor, number, or a
    (nested) list/tuple of exact numbers."""
    kind = type(obj)
    if kind is _np.ndarray:
        if obj.dtype.kind not in _ARRAY_KINDS:
            raise NotExact(f"expected a numeric array, got one of dtype {obj.dtype}: return numbers")
        return _np.array(obj, dtype=dtype, copy=True)
    torch = _torch()
    if torch is not None and kind in _tensor_types(torch):
        return _np.array(_tensor_to_array(obj, torch), dtype=dtype, copy=True)
    if kind in (list, tuple):
        return _np.array(_nested_numbers(obj, depth=0), dtype=dtype)
    if kind in _PY_NUMBERS or kind in _NUMPY_SCALARS:
        return _np.array(_exact_float(obj), dtype=dtype)
    raise _fail("an array, a tensor or a list of numbers", obj)


def _nested_numbers(obj, depth: int):
    if depth > 8:
        raise NotExact("expected a list of numbers, got lists nested more than 8 deep")
    kind = type(obj)
    if kind is list:
        return [_nested_numbers(item, depth + 1) for item in list.__iter__(obj)]
    if kind is tuple:
        return [_nested_numbers(item, depth + 1) for item in tuple.__iter__(obj)]
    return _exact_float(obj)


def _exact_float(obj) -> float:
    """A Python ``float`` from an exact int/float/bool, numpy scalar, or a one-element exact
    ndarray or Tensor."""
    kind = type(obj)
    if kind in _PY_NUMBERS:  # exactly bool/int/float: their own __float__, not a student's
        return float(obj)
    if kind in _NUMPY_SCALARS:
        return float(_np.array(obj).astype(_np.float64).item())
    if kind is _np.ndarray or (_torch() is not None and kind in _tensor_types(_torch())):
        values = _exact_array(obj)
        if values.size != 1:
            raise NotExact(f"expected a single number, got an array of shape {tuple(values.shape)}")
        return float(values.reshape(-1)[0].item())
    raise _fail("a number", obj)


def _exact_int(obj) -> int:
    """A Python ``int`` from an exact int, bool or integer numpy scalar (a float is refused)."""
    kind = type(obj)
    if kind in (int, bool):
        return int(obj)
    if kind in _NUMPY_SCALARS and issubclass(kind, (_np.integer, _np.bool_)):
        return int(_np.array(obj).astype(_np.int64).item())
    raise _fail("an integer", obj)


def _exact_bool(obj) -> bool:
    kind = type(obj)
    if kind is bool:
        return obj
    if kind is _np.bool_:
        return bool(_np.array(obj).item())
    raise _fail("True or False", obj)


def _exact_str(obj) -> str:
    if type(obj) is str:
        return str.__str__(obj)
    raise _fail("a string", obj)


def _exact_tensor(obj):
    """A detached CPU copy (same dtype) of an exact ``torch.Tensor``; exact ndarrays and
    lists of numbers become float64 tensors."""
    torch = _torch()
    if torch is None:
        import torch  # noqa: F811 - the test cell asked for a tensor, so torch is wanted
    kind = type(obj)
    if kind in _tensor_types(torch):
        return _plain_tensor(obj, torch)
    return torch.from_numpy(_exact_array(obj))


def _exact_list(obj, item=None) -> list:
    """A new ``list`` from an exact list or tuple, each element passed through ``item``
    (e.g. ``exact_float``, ``exact_str``) when given."""
    kind = type(obj)
    if kind not in (list, tuple):
        raise _fail("a list", obj)
    items = list.__iter__(obj) if kind is list else tuple.__iter__(obj)
    convert = _PUBLIC_TO_IMPL.get(item, item)  # exact_float per element: one restore, not one each
    return [convert(value) if convert is not None else value for value in items]


def _exact_dict(obj) -> dict:
    """A new ``dict`` with exact string keys; values are left for the caller to convert."""
    if type(obj) is not dict:
        raise _fail("a dict", obj)
    return {_exact_str(key): value for key, value in dict.items(obj)}


def is_number(obj) -> bool:
    """True for exact Python or numpy numbers (no conversion, no student code)."""
    kind = type(obj)
    return kind in _PY_NUMBERS or kind in _NUMPY_SCALARS


# --- public entry points: restore first (in a grading kernel), then convert ---------------------

_KEPT: list = []
"""Every object a public function read, kept alive until the guard's next test-cell restore
empties this list: a student's object freed right after its conversion would run its
``__del__``, weakref callbacks or ``weakref.finalize`` functions *after* the restore, where they
could patch what the comparison that follows relies on."""

def exact_array(obj, dtype=float, *, _guard=_GUARD) -> _np.ndarray:
    """A new ``numpy.ndarray`` of ``dtype`` from an exact ndarray, Tensor, number, or a
    (nested) list/tuple of exact numbers."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_array(obj, dtype)


def exact_float(obj, *, _guard=_GUARD) -> float:
    """A Python ``float`` from an exact int/float/bool, numpy scalar, or a one-element exact
    ndarray or Tensor."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_float(obj)


def exact_int(obj, *, _guard=_GUARD) -> int:
    """A Python ``int`` from an exact int, bool or integer numpy scalar (a float is refused)."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_int(obj)


def exact_bool(obj, *, _guard=_GUARD) -> bool:
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_bool(obj)


def exact_str(obj, *, _guard=_GUARD) -> str:
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_str(obj)


def exact_tensor(obj, *, _guard=_GUARD):
    """A detached CPU copy (same dtype) of an exact ``torch.Tensor``; exact ndarrays and
    lists of numbers become float64 tensors."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_tensor(obj)


def exact_list(obj, item=None, *, _guard=_GUARD) -> list:
    """A new ``list`` from an exact list or tuple, each element passed through ``item``
    (e.g. ``exact_float``, ``exact_str``) when given."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_list(obj, item)


def exact_dict(obj, *, _guard=_GUARD) -> dict:
    """A new ``dict`` with exact string keys; values are left for the caller to convert."""
    _guard[0](_guard[1], {})
    _KEPT.append(obj)
    return _exact_dict(obj)


_PUBLIC_TO_IMPL = {exact_array: _exact_array, exact_float: _exact_float, exact_int: _exact_int,
                   exact_bool: _exact_bool, exact_str: _exact_str, exact_tensor: _exact_tensor}
