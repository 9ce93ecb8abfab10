"""Runs inside the grading kernel: pristine copies of what hidden tests rely on, restored before
every test cell.

The kernel launcher (``autograder.kernel_launcher``) calls :func:`install` before the student's
first cell runs. It records the contents of ``builtins``, of the comparison modules (numpy,
numpy.testing, math, torch, torch.testing, torch.Tensor's methods, ...) and of the IPython
machinery that decides whether a cell raised (input/AST transformers, custom exception
handlers, event callbacks, ``run_cell``). Before each autograded test cell the grader's
executor (``autograder.nbgrader_ext.GuardedExecute``) runs :func:`restore`, which puts all of
those back and removes notebook globals that shadow builtins (``print = ...``,
``def abs(x): ...``) or that rebind the conventional aliases (``np``, ``torch``, ``F``, ...).

This is defence in depth, not a sandbox: the executor also sends a probe that must fail and
checks from outside the kernel that it did (see nbgrader_ext), so a notebook that disables
error reporting scores nothing for the tests that follow.
"""
from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

ALIASES = {
    "np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch", "F": "torch.nn.functional",
    "nn": "torch.nn", "plt": "matplotlib.pyplot",
}
DEFAULT_MODULES = ("numpy", "numpy.testing", "numpy.linalg", "math", "operator", "functools")
TORCH_MODULES = ("torch", "torch.testing", "torch.nn", "torch.nn.functional")
OK = "autograder-guard-ok"
SHELL_METHODS = ("run_cell", "run_cell_async", "_run_cell", "run_ast_nodes", "run_code", "transform_cell",
                 "transform_ast", "showtraceback", "_showtraceback", "showsyntaxerror", "should_run_async",
                 "get_exception_only", "CustomTB")
# names IPython itself swaps in and out of builtins / the user namespace around every cell
IPYTHON_MANAGED = {"exit", "quit", "_", "__", "___", "get_ipython", "display", "__IPYTHON__", "open", "In", "Out",
                   "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "input", "raw_input", "getpass"}

_state: dict = {}


def _snapshot_module(name: str):
    try:
        module = importlib.import_module(name)
    except Exception:  # not installed, or too big for this kernel: nothing to guard
        return None
    return module, dict(vars(module))


def _torch_classes(torch) -> list:
    return [(cls, {k: v for k, v in vars(cls).items() if not k.startswith("__dict")})
            for cls in (torch.Tensor, torch.nn.Module)]


class _SnapshotOnImport(importlib.abc.MetaPathFinder):
    """Records a module's pristine contents the moment its import finishes (torch is too slow to
    import in every kernel just in case)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path=None, target=None):
        if name not in self.names:
            return None
        self.names.discard(name)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module, _original=original, _name=name):
            _original(module)
            try:
                _state["snapshots"][_name] = (module, dict(vars(module)))
                _state["modules_entries"][_name] = module
                if _name == "torch":  # torch's import has finished: its classes too
                    _state["classes"].extend(_torch_classes(module))
            except Exception:  # never break the student's import
                pass

        spec.loader.exec_module = exec_module
        return spec


def install(shell=None, modules: list[str] | None = None, lazy: list[str] | None = None) -> None:
    """Record pristine state; ``modules`` (imported now) defaults to AUTOGRADER_GUARD_MODULES and
    ``lazy`` (recorded when first imported) to AUTOGRADER_GUARD_LAZY, both comma-separated."""
    if modules is None:
        listed = os.environ.get("AUTOGRADER_GUARD_MODULES", "")
        modules = [m for m in listed.split(",") if m] or list(DEFAULT_MODULES)
    if lazy is None:
        listed = os.environ.get("AUTOGRADER_GUARD_LAZY", ",".join(TORCH_MODULES))
        lazy = [m for m in listed.split(",") if m]
    snapshots = {}
    for name in modules:
        found = _snapshot_module(name)
        if found is not None:
            snapshots[name] = found
    classes = []
    if "torch" in snapshots:
        classes.extend(_torch_classes(snapshots["torch"][0]))
    pending = [name for name in lazy if name not in sys.modules and name not in snapshots]
    for name in lazy:
        if name in sys.modules and name not in snapshots:
            snapshots[name] = (sys.modules[name], dict(vars(sys.modules[name])))
            if name == "torch":  # already imported (e.g. by a startup file): its classes too
                classes.extend(_torch_classes(sys.modules[name]))
    if pending:
        sys.meta_path.insert(0, _SnapshotOnImport(pending))
    if "numpy" in snapshots:
        np = snapshots["numpy"][0]
        classes.append((np.ndarray, None))  # a C type: cannot be patched, listed for completeness
    ipython = {}
    if shell is not None:
        ipython = {
            "input_transformers_cleanup": list(getattr(shell.input_transformer_manager, "cleanup_transforms", [])),
            "line_transforms": list(getattr(shell.input_transformer_manager, "line_transforms", [])),
            "token_transformers": list(getattr(shell.input_transformer_manager, "token_transformers", [])),
            "input_transformers_post": list(getattr(shell, "input_transformers_post", [])),
            "ast_transformers": list(getattr(shell, "ast_transformers", [])),
            "instance_attrs": set(vars(shell)),
        }
        for cls in type(shell).__mro__:
            if cls.__module__.startswith(("IPython.", "ipykernel.")):
                classes.append((cls, {k: v for k, v in vars(cls).items() if callable(v)}))
    _state.update(
        builtins={k: v for k, v in vars(builtins).items() if k not in IPYTHON_MANAGED}, snapshots=snapshots, classes=classes, ipython=ipython, shell=shell,
        excepthook=sys.excepthook, displayhook=sys.displayhook, stdout=sys.stdout, stderr=sys.stderr,
        modules_entries={name: snap[0] for name, snap in snapshots.items()}, lazy=list(lazy),
    )


def _restore_dict(target: dict, pristine: dict) -> list[str]:
    changed = []
    for key, value in pristine.items():
        current = target.get(key, _MISSING)
        if current is not value and getattr(current, "__wrapped__", None) is value:
            continue  # a library decorating its own function (torch._dynamo wraps torch.manual_seed)
        if current is not value:
            try:
                target[key] = value
                changed.append(key)
            except TypeError:
                pass
    return changed


_MISSING = object()


def restore() -> str:
    """Put everything recorded by :func:`install` back; returns a line naming what was repaired."""
    if not _state:
        return "guard not installed"
    unguarded = [name for name in _state["lazy"] if name in sys.modules and name not in _state["snapshots"]]
    if unguarded:  # imported behind the guard's back (its import hook was removed)
        return "autograder-guard-unsafe: " + ", ".join(unguarded) + " imported without the guard"
    repaired = []
    sys.settrace(None)
    sys.setprofile(None)
    sys.excepthook = _state["excepthook"]
    shell = _state["shell"]
    # during a cell IPython's display trap puts the shell's own hook there
    sys.displayhook = shell.displayhook if shell is not None else _state["displayhook"]
    sys.stdout, sys.stderr = _state["stdout"], _state["stderr"]
    changed = _restore_dict(vars(builtins), _state["builtins"])
    if changed:
        repaired.append("builtins (" + ", ".join(changed) + ")")
    for name, (module, pristine) in _state["snapshots"].items():
        if sys.modules.get(name) is not module:
            sys.modules[name] = module
            repaired.append(f"sys.modules[{name!r}]")
        changed = _restore_dict(vars(module), pristine)
        if changed:
            repaired.append(", ".join(f"{name}.{key}" for key in changed[:8]))
    for cls, pristine in _state["classes"]:
        if pristine is None:
            continue
        for key, value in list(vars(cls).items()):
            if key not in pristine and getattr(value, "__module__", "") in (None, "__main__"):
                try:  # a method the notebook added (torch.Tensor.allclose = ...) hiding the C one
                    delattr(cls, key)
                    repaired.append(f"{cls.__name__}.{key}")
                except (TypeError, AttributeError):
                    pass
        for key, value in pristine.items():
            if vars(cls).get(key, _MISSING) is not value:
                try:
                    setattr(cls, key, value)
                    repaired.append(f"{cls.__name__}.{key}")
                except (TypeError, AttributeError):
                    pass
    shell = _state["shell"]
    if shell is not None:
        saved = _state["ipython"]
        manager = shell.input_transformer_manager
        for attr, key in (("cleanup_transforms", "input_transformers_cleanup"), ("line_transforms", "line_transforms"),
                          ("token_transformers", "token_transformers")):
            if hasattr(manager, attr) and list(getattr(manager, attr)) != saved[key]:
                setattr(manager, attr, list(saved[key]))
                repaired.append(f"input transformers ({attr})")
        if list(shell.input_transformers_post) != saved["input_transformers_post"]:
            shell.input_transformers_post = list(saved["input_transformers_post"])
            repaired.append("input_transformers_post")
        if list(shell.ast_transformers) != saved["ast_transformers"]:
            shell.ast_transformers = list(saved["ast_transformers"])
            repaired.append("ast_transformers")
        if shell.custom_exceptions:
            shell.custom_exceptions = ()
            repaired.append("custom exception handler")
        for name, cbs in shell.events.callbacks.items():
            kept = [cb for cb in cbs if getattr(cb, "__module__", None) not in (None, "__main__")]
            if len(kept) != len(cbs):
                cbs[:] = kept
                repaired.append(f"event callbacks ({name})")
        for attr in SHELL_METHODS:
            if attr in vars(shell) and attr not in saved["instance_attrs"]:
                delattr(shell, attr)  # an instance attribute hiding a method (shell.run_cell = ...)
                repaired.append(f"shell.{attr}")
        namespace = shell.user_ns
        for name in list(namespace):
            if (name in _state["builtins"] and not name.startswith("_") and name not in IPYTHON_MANAGED
                    and namespace[name] is not _state["builtins"][name]):
                del namespace[name]
                repaired.append(f"global {name!r} shadowing a builtin")
        for alias, module_name in ALIASES.items():
            real = _state["modules_entries"].get(module_name) or sys.modules.get(module_name)
            value = namespace.get(alias, real)
            # only stand-ins for the module (another module, a notebook-made object); `F = features` stays
            if real is not None and value is not real and (
                    isinstance(value, types.ModuleType) or isinstance(value, types.SimpleNamespace)
                    or getattr(type(value), "__module__", "") == "__main__"):
                namespace[alias] = real
                repaired.append(f"global {alias!r}")
    return OK + (": repaired " + ", ".join(dict.fromkeys(repaired)) if repaired else "")


def load_ipython_extension(shell) -> None:  # `%load_ext autograder.kernel_guard` for manual use
    install(shell)
