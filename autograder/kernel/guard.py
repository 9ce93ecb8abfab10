"""Runs inside the grading kernel: pristine copies of what hidden tests rely on, put back before
every test cell and whenever a hidden test reads a student's result through ``autograder.kernel.exact``.

The kernel launcher (``autograder.kernel.launcher``) calls :func:`install` before the student's
first cell, then :func:`seal`. ``install`` records

- ``builtins``, the comparison modules (numpy and every ``numpy.*`` submodule, math, operator,
  functools, ``autograder.kernel.exact``; torch and ``torch.*`` eagerly or the moment torch is first
  imported), ``torch.Tensor``/``torch.nn.Module`` methods, the methods of the layer and model
  classes a hidden test may build afresh (``torch.nn.modules.*``, transformers' models, peft's
  LoRA: :data:`MODEL_CLASS_PREFIXES`, each the moment it is imported) and ``sys.modules`` itself;
- the machinery that runs a cell and reports its result (IPython, ipykernel, jupyter_client's
  ``Session``, pyzmq, tornado, asyncio: module functions and class methods), the input/AST
  transformers, exception handlers, event callbacks, signal handlers and ``gc.callbacks``.

``seal`` moves all of that into the closure of an *audit hook* (PEP 578) whose functions have
a private globals dict and a private copy of ``builtins``, and empties this module's own state.
An audit hook cannot be removed, the hook refuses every later ``sys.addaudithook``, refuses
``gc.get_objects``/``get_referrers``/``get_referents`` and ``sys._current_frames`` (the ways to
reach the closure), and refuses replacing ``__code__``/``__defaults__`` of the functions it
guards. Nothing in the kernel's namespace or in ``sys.modules`` leads to the guard, so replacing
or poisoning ``autograder.kernel.guard`` changes nothing.

The grader's executor (``autograder.grading.executor.GuardedExecute``) reaches the hook through
the code it runs, not through a name: it puts ``__autograder_guard__ = "<nonce>"`` in front of
each test cell. When the kernel ``exec``s that statement the hook (1) parks every Python thread
the notebook started (an exception whose constructor never returns), (2) checks that every frame
on the stack belongs to the cell-running machinery as it was at start and that none of that
machinery was replaced (a patched ``run_cell``, ``Session.send``, input transformer, ...), (3)
puts everything recorded back, and (4) writes ``autograder-guard <nonce> <status> <hmac>`` to the
cell's output, signed with a key only the grader and the sealed hook know (read from a file the
launcher deletes before the notebook runs). The executor accepts the test only with a valid
signature and no "tampered" status. ``autograder.kernel.exact`` triggers the same restore (without the
reply) each time a hidden test reads a student's result, so what the student's function patched
while it ran is undone before the comparison.

This is defence in depth inside a process that runs the student's code; the first line is the
sandbox (``autograder.isolation``), which keeps hidden tests, other submissions and the grader out
of the kernel's reach whatever happens in here.
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
DEFAULT_MODULES = ("numpy", "numpy.testing", "numpy.linalg", "math", "operator", "functools", "autograder",
                   "autograder.kernel.exact")
STDLIB_MODULES = ("warnings", "random", "json", "json.decoder", "json.encoder", "json.scanner", "pathlib",
                  "dataclasses", "importlib.util", "contextlib")
"""Pure-Python standard modules hidden tests call *after* ``autograder.kernel.exact``'s restore
(``with warnings.catch_warnings():`` around a conversion, ``dataclasses.replace``, ``json.loads``,
``pathlib.Path.read_text``): always recorded, their functions and their classes' methods restored
with the rest, so that a notebook that replaced ``warnings.catch_warnings.__exit__`` runs nothing
there. Functions only: their data (``warnings.filters``, the random state) is the test's own."""
TORCH_MODULES = ("torch", "torch.testing", "torch.nn", "torch.nn.functional")
HELPERS_MODULES = ("helpers", "helpers.checkpoint", "helpers.course_settings", "helpers.grpo", "helpers.irl",
                   "helpers.irl_plots", "helpers.lm", "helpers.logprobs", "helpers.math_tasks", "helpers.profiles",
                   "helpers.runtime", "helpers.submission", "helpers.tiny_grpo_tools", "helpers.tiny_model",
                   "helpers.toy_sort")
"""The kit's own modules: recorded when first imported and restored before every test cell, so a
notebook that patches ``helpers.grpo.sample_completions`` cannot change what a hidden test sees."""
MODEL_CLASS_PREFIXES = ("torch.nn.modules.", "transformers.modeling_utils", "transformers.models.", "peft.peft_model",
                        "peft.tuners.lora.", "peft.tuners.tuners_utils")
"""Modules whose classes' methods are restored before every test cell (recorded the moment each
module is imported): the layers and models a hidden test builds afresh, so that a notebook that
patches ``Qwen2ForCausalLM.forward`` or ``torch.nn.Linear.forward`` on the class cannot change
what the test's fresh model computes. Methods only: a library's class-level data stays as the
library left it."""
OK = "autograder-guard-ok"
MARK = "__autograder_guard__"
MARK_INLINE = "__autograder_guard_inline__"
MARK_BASELINE = "__autograder_guard_baseline__"
REPLY = "autograder-guard"
# prefixes of the modules that run a cell and report its result
DISPATCH_PREFIXES = ("IPython.", "ipykernel.", "jupyter_client.", "zmq.", "tornado.", "asyncio.", "comm.",
                     "traitlets.")
DISPATCH_MODULES = ("IPython", "ipykernel", "jupyter_client", "zmq", "tornado", "asyncio", "comm", "threading",
                    "traitlets", "autograder.kernel.launcher")
# their code counts as machinery (threads running it are not parked), but libraries may legitimately
# change them (threading.excepthook): not checked for tampering
CODE_ONLY = ("threading",)
# builtins on the path from a request to the cell's code: replacing one is tampering, not a slip
DISPATCH_BUILTINS = ("exec", "eval", "compile", "__import__", "__build_class__")
SHELL_METHODS = ("run_cell", "run_cell_async", "_run_cell", "run_ast_nodes", "run_code", "transform_cell",
                 "transform_ast", "showtraceback", "_showtraceback", "showsyntaxerror", "should_run_async",
                 "get_exception_only", "CustomTB")
# names IPython itself swaps in and out of builtins / the user namespace around every cell
IPYTHON_MANAGED = {"exit", "quit", "_", "__", "___", "get_ipython", "display", "__IPYTHON__", "open", "In", "Out",
                   "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "input", "raw_input", "getpass"}
BLOCKED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames"})

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


def _classes_defined_in(module, any_metaclass: bool = False) -> list:
    """The classes ``module`` itself defines (not those it imports); ``any_metaclass`` also takes
    classes made by a metaclass (torch's and transformers' ABCs), else plain ``type`` only."""
    name = module.__name__
    return [value for value in list(vars(module).values())
            if (type(value) is type or any_metaclass and isinstance(value, type) and issubclass(type(value), type))
            and value.__dict__.get("__module__") == name]


def _own_classes(module) -> list:
    """(class, its dict) for the classes a kit module defines: their methods are restored too."""
    return [(cls, dict(vars(cls))) for cls in _classes_defined_in(module)]


def _method_classes(module) -> list:
    """(class, its methods and descriptors) for the classes a library module defines."""
    found = []
    for cls in _classes_defined_in(module, any_metaclass=True):
        methods = {k: v for k, v in list(vars(cls).items())
                   if type(v) is types.FunctionType or type(v) in (staticmethod, classmethod, property)}
        if methods:
            found.append((cls, methods))
    return found


def _submodules(prefixes: tuple, snapshots: dict) -> None:
    """Add every loaded submodule of ``prefixes`` (numpy._core.numeric, numpy.testing._private.utils,
    ...): their functions are what the public ones call."""
    for name, module in list(sys.modules.items()):
        if module is None or name in snapshots or not name.startswith(prefixes):
            continue
        try:
            snapshots[name] = (module, dict(vars(module)))
        except TypeError:
            pass


class _SnapshotOnImport(importlib.abc.MetaPathFinder):
    """Records a module's pristine contents the moment its import finishes (torch is too slow to
    import in every kernel just in case): the modules in ``names``, and every module under
    ``prefixes`` (their classes' methods)."""

    def __init__(self, names, record, prefixes=()):
        self.names = set(names)
        self.prefixes = tuple(prefixes)
        self._record = record
        self._busy: set = set()

    def find_spec(self, name, path=None, target=None):
        # A name stays listed until its import has run: ``importlib.util.find_spec("torch")`` alone
        # (transformers asks it at import, before importing torch) imports nothing, so it must not
        # use up the one recording (that left torch unrecorded and every later check untrusted).
        if name in self._busy or not (name in self.names or name.startswith(self.prefixes)):
            return None
        self._busy.add(name)  # importlib.util.find_spec asks this finder again
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module
        record, names = self._record, self.names

        def exec_module(module, _original=original, _name=name):
            _original(module)
            names.discard(_name)
            try:
                record(_name, module)
            except Exception:  # never break the student's import
                pass

        spec.loader.exec_module = exec_module
        return spec


def _make_recorder(state: dict):
    def record(name: str, module) -> None:
        _record_lazy(state, name, module)
    return record


def _record_lazy(state: dict, name: str, module) -> None:
    if not state:
        return
    if name.startswith(MODEL_CLASS_PREFIXES) and name not in state["class_modules"]:
        state["class_modules"].add(name)
        found = _method_classes(module)  # (transformers swaps some packages for a lazy module: no classes there)
        state["classes"].extend(found)
        for _, methods in found:
            state["protected"].update(_function_ids(methods))
    if name in state["snapshots"] or name not in state["lazy"] or sys.modules.get(name) is not module:
        return
    state["snapshots"][name] = (module, dict(vars(module)))
    state["modules_entries"][name] = module
    if name.split(".")[0] == "helpers":
        state["classes"].extend(_own_classes(module))
    if name == "torch":  # torch's import has finished: its classes and submodules too
        state["classes"].extend(_torch_classes(module))
        _submodules(("torch.",), state["snapshots"])
    state["protected"].update(_function_ids(state["snapshots"][name][1]))


def _function_ids(namespace: dict) -> set:
    """ids of the plain functions in a module or class dict (their __code__ may not be replaced).
    Reads nothing but function objects' own dicts: no getattr on arbitrary module values."""
    found = set()
    for value in list(namespace.values()):
        if type(value) is types.FunctionType:
            found.add(id(value))
            wrapped = value.__dict__.get("__wrapped__")
            if type(wrapped) is types.FunctionType:
                found.add(id(wrapped))
        elif type(value).__name__ == "_ArrayFunctionDispatcher":  # numpy's public functions wrap these
            implementation = getattr(value, "_implementation", None)
            if type(implementation) is types.FunctionType:
                found.add(id(implementation))
    return found


def _dispatch_state(shell) -> tuple[list, list, set]:
    """(module snapshots, class snapshots, code objects) of the machinery that runs cells."""
    modules, classes, seen = [], [], set()
    codes: set = set()
    keep: list = []

    def add_code(code):
        stack = [code]
        while stack:
            c = stack.pop()
            if id(c) in codes:
                continue
            codes.add(id(c))
            keep.append(c)
            stack.extend(k for k in c.co_consts if type(k) is types.CodeType)

    def add_callable(value):
        kind = type(value)
        if kind is types.FunctionType:
            add_code(value.__code__)
            wrapped = value.__dict__.get("__wrapped__")  # @contextmanager, functools.wraps
            if type(wrapped) is types.FunctionType:
                add_code(wrapped.__code__)
        elif kind in (staticmethod, classmethod):
            add_callable(value.__func__)
        elif kind is property:
            for f in (value.fget, value.fset, value.fdel):
                if f is not None:
                    add_callable(f)

    for name, module in list(sys.modules.items()):
        if module is None or not (name in DISPATCH_MODULES or name.startswith(DISPATCH_PREFIXES)):
            continue
        try:
            namespace = dict(vars(module))
        except TypeError:
            continue
        code_only = name in CODE_ONLY
        if not code_only:
            modules.append((module, {k: v for k, v in namespace.items() if callable(v) or type(v) is property}))
        for value in namespace.values():
            add_callable(value)
            if code_only and type(value) is type:
                for member in list(vars(value).values()):
                    add_callable(member)
                continue
            if type(value) is type or isinstance(type(value), type) and issubclass(type(value), type):
                if id(value) in seen or getattr(value, "__module__", None) != name:
                    continue
                seen.add(id(value))
                methods = {}
                for key, member in list(vars(value).items()):
                    # methods and descriptors (traitlets' traits too): what a notebook could swap
                    if callable(member) or type(member) in (staticmethod, classmethod, property) or \
                            any("__get__" in vars(base) for base in type(member).__mro__ if base is not object):
                        methods[key] = member
                        add_callable(member)
                classes.append((value, methods))
    if shell is not None:
        for cls in type(shell).__mro__:
            if id(cls) not in seen and cls.__module__.startswith(("IPython.", "ipykernel.")):
                seen.add(id(cls))
                classes.append((cls, {k: v for k, v in vars(cls).items() if callable(v)}))
    frame = sys._getframe(0)
    while frame is not None:  # the launcher's own frames (the -c bootstrap, main): the bottom of every stack
        add_code(frame.f_code)
        frame = frame.f_back
    return modules, classes, (codes, keep)


def _record_stdlib(snapshots: dict, classes: list) -> set:
    """Snapshots of :data:`STDLIB_MODULES` (and their submodules) into ``snapshots``, their classes'
    methods into ``classes``; returns their names (restored functions-only)."""
    stdlib = set()
    for name in STDLIB_MODULES:
        found = snapshots.get(name) or _snapshot_module(name)
        if found is not None:
            snapshots[name] = found
            stdlib.add(name)
    before = set(snapshots)
    _submodules(("pathlib.", "json."), snapshots)  # Python 3.13 splits pathlib into pathlib._local, ...
    stdlib |= set(snapshots) - before
    for name in sorted(stdlib):
        classes.extend(_method_classes(snapshots[name][0]))
    return stdlib


def install(shell=None, modules: list[str] | None = None, lazy: list[str] | None = None) -> None:
    """Record pristine state; ``modules`` (imported now) defaults to AUTOGRADER_GUARD_MODULES and
    ``lazy`` (recorded when first imported) to AUTOGRADER_GUARD_LAZY, both comma-separated."""
    import gc
    import signal

    if modules is None:
        listed = os.environ.get("AUTOGRADER_GUARD_MODULES", "")
        modules = [m for m in listed.split(",") if m] or list(DEFAULT_MODULES)
    if lazy is None:
        listed = os.environ.get("AUTOGRADER_GUARD_LAZY", ",".join(TORCH_MODULES + HELPERS_MODULES))
        lazy = [m for m in listed.split(",") if m]
    snapshots = {}
    for name in modules:
        found = _snapshot_module(name)
        if found is not None:
            snapshots[name] = found
    _submodules(tuple(f"{m.split('.')[0]}." for m in modules if m.split(".")[0] in ("numpy", "torch")), snapshots)
    classes = []
    stdlib = _record_stdlib(snapshots, classes)
    if "torch" in snapshots:
        classes.extend(_torch_classes(snapshots["torch"][0]))
    pending = [name for name in lazy if name not in sys.modules and name not in snapshots]
    for name in lazy:
        if name in sys.modules and name not in snapshots:
            snapshots[name] = (sys.modules[name], dict(vars(sys.modules[name])))
            if name == "torch":  # already imported (e.g. by a startup file): its classes too
                classes.extend(_torch_classes(sys.modules[name]))
                _submodules(("torch.",), snapshots)
            if name.split(".")[0] == "helpers":
                classes.extend(_own_classes(sys.modules[name]))
    class_modules = set()
    for name, module in list(sys.modules.items()):  # already imported (pytest, a startup file)
        if module is not None and name.startswith(MODEL_CLASS_PREFIXES):
            class_modules.add(name)
            classes.extend(_method_classes(module))
    state: dict = {}
    finder = _SnapshotOnImport(pending, _make_recorder(state), MODEL_CLASS_PREFIXES)
    if finder is not None:
        sys.meta_path.insert(0, finder)
    ipython = {}
    if shell is not None:
        ipython = {
            "input_transformers_cleanup": list(getattr(shell.input_transformer_manager, "cleanup_transforms", [])),
            "line_transforms": list(getattr(shell.input_transformer_manager, "line_transforms", [])),
            "token_transformers": list(getattr(shell.input_transformer_manager, "token_transformers", [])),
            "input_transformers_post": list(getattr(shell, "input_transformers_post", [])),
            "ast_transformers": list(getattr(shell, "ast_transformers", [])),
            "instance_attrs": set(vars(shell)),
            "events": {name: list(cbs) for name, cbs in shell.events.callbacks.items()},
        }
    dispatch_modules, dispatch_classes, (codes, keep) = _dispatch_state(shell)
    protected = set()
    for _, pristine in snapshots.values():
        protected |= _function_ids(pristine)
    for _, methods in dispatch_classes + classes:
        protected |= _function_ids(methods)
    for _, functions in dispatch_modules:
        protected |= _function_ids(functions)
    handlers = {}
    for signum in signal.valid_signals():
        try:
            handlers[signum] = signal.getsignal(signum)
        except (ValueError, OSError):
            pass
    global _state
    _state = state
    state.update(
        builtins={k: v for k, v in vars(builtins).items() if k not in IPYTHON_MANAGED}, snapshots=snapshots,
        classes=classes, ipython=ipython, shell=shell, excepthook=sys.excepthook, displayhook=sys.displayhook,
        stdout=sys.stdout, stderr=sys.stderr, modules_entries={name: snap[0] for name, snap in snapshots.items()},
        lazy=list(lazy), finder=finder, all_modules=dict(sys.modules), meta_path=list(sys.meta_path),
        class_modules=class_modules,
        dispatch_modules=dispatch_modules, dispatch_classes=dispatch_classes, codes=codes, keep=keep,
        protected=protected, handlers=handlers, gc_callbacks=list(gc.callbacks), gc_threshold=gc.get_threshold(),
        callables_only=stdlib,
        switch=sys.getswitchinterval(), threads=set(sys._current_frames()),
    )


# ----------------------------------------------------------------------------------------------
# restore: written once, used in two ways. In-process (unit tests, `%load_ext`) it runs with this
# module's globals; sealed in a kernel it is re-created with private globals (see seal()).
# ----------------------------------------------------------------------------------------------

def _make_restorer(state, tools):
    """Returns restore(kind, caller) -> (repaired names, tampered reasons) and set_baseline(objects).

    ``tools`` holds every function it calls, captured at install: nothing here looks up a global
    a notebook can change, and nothing calls a method a notebook's object may define (no
    ``getattr`` on student objects, no ``==`` on them, identity comparisons only)."""
    MISSING = tools["missing"]
    builtins_dict = tools["builtins_dict"]
    sys_mod = tools["sys"]
    modules_dict = tools["modules_dict"]
    gc_mod, signal_mod, thread_mod = tools["gc"], tools["signal"], tools["thread"]
    function_type, module_type, namespace_type = tools["function_type"], tools["module_type"], tools["namespace_type"]
    method_type = tools["method_type"]
    set_async_exc, py_object, c_ulong = tools["set_async_exc"], tools["py_object"], tools["c_ulong"]
    current_frames, sleep = tools["current_frames"], tools["sleep"]
    type_module = tools["type_module"]
    plain = tools["plain_types"]
    codes = state["codes"]
    parked_code = []

    class Parked(BaseException):
        """Raised into a notebook's thread: its constructor never returns, so the thread stops."""

        def __init__(self, *args):
            while True:
                sleep(3600)

    parked_code.append(Parked.__init__.__code__)
    baseline = {"threads": set(state["threads"]), "set": False, "instances": {}, "frozen": False}

    def module_of(obj):
        """The module that defined obj (a function's, a method's, a class's, else its class's)."""
        kind = type(obj)
        if kind is function_type:
            return obj.__module__
        if kind is method_type and type(obj.__func__) is function_type:
            return obj.__func__.__module__
        cls = obj if issubclass(kind, type) else kind
        try:
            return type_module(cls, type)
        except Exception:  # noqa: BLE001
            return None

    def is_machinery(value):
        """A function (or bound method) of the cell-running machinery as recorded at install."""
        kind = type(value)
        func = value.__func__ if kind is method_type else value
        return type(func) is function_type and id(func.__code__) in codes

    def same(a, b):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))

    def restore_dict(target, pristine, only_callables, changed):
        for key, value in pristine.items():
            current = target.get(key, MISSING)
            if current is value:
                continue
            if only_callables and not callable(value) and type(value) is not module_type:
                continue
            if type(current) is function_type and current.__dict__.get("__wrapped__", MISSING) is value:
                continue  # a library decorating its own function (torch._dynamo wraps torch.manual_seed)
            target[key] = value
            changed.append(key)

    def park_threads(repaired):
        """Every Python thread the notebook started (sys._current_frames sees threads made with
        _thread too) gets an exception whose constructor sleeps forever."""
        main = thread_mod.get_ident()
        frames = current_frames()
        targets, where = [], []
        for ident, frame in frames.items():
            if ident == main or ident in baseline["threads"] or frame.f_code is parked_code[0]:
                continue
            probe, machinery = frame, True
            while probe is not None:  # pyzmq's garbage collector thread runs library code only
                if id(probe.f_code) not in codes:
                    machinery = False
                    break
                probe = probe.f_back
            if machinery:
                continue
            set_async_exc(c_ulong(ident), py_object(Parked))
            targets.append(ident)
            bottom = frame
            while bottom.f_back is not None:
                bottom = bottom.f_back
            where.append(f"{bottom.f_code.co_name}@{bottom.f_code.co_filename.rsplit('/', 1)[-1]}")
        if not targets:
            return
        for _ in range(60):  # let them run into the exception (a few ms each)
            sleep(0.005)
            frames = current_frames()
            if all(frames.get(i) is None or frames[i].f_code is parked_code[0] for i in targets):
                break
        repaired.append(f"stopped {len(targets)} background thread(s) started by the notebook "
                        f"({', '.join(dict.fromkeys(where))})")

    def stack_is_pristine(frame, tampered):
        while frame is not None:
            if id(frame.f_code) not in codes:
                code = frame.f_code
                tampered.append(f"frame:{code.co_name}@{code.co_filename.rsplit('/', 1)[-1]}")
                return
            frame = frame.f_back

    def restore_machinery(tampered):
        """The classes and modules that run cells and report results: restored first (everything
        after reads IPython objects), any change is tampering."""
        for module, pristine in state["dispatch_modules"]:
            changed = []
            restore_dict(vars(module), pristine, False, changed)
            tampered.extend(f"{module.__name__}.{key}" for key in changed[:4])
        for cls, members in state["dispatch_classes"]:
            namespace = vars(cls)
            for key, value in members.items():
                current = namespace.get(key, MISSING)
                if current is value:
                    continue
                try:
                    setattr(cls, key, value)
                except (TypeError, AttributeError):
                    pass
                if not (type(value) in plain and (current is MISSING or type(current) in plain)):
                    tampered.append(f"{cls.__name__}.{key}")
            for key, value in list(namespace.items()):
                if key not in members and type(value) is function_type and value.__module__ in (None, "__main__"):
                    try:
                        delattr(cls, key)
                    except (TypeError, AttributeError):
                        pass
                    tampered.append(f"{cls.__name__}.{key}")

    def restore_builtins(repaired, tampered):
        changed = []
        restore_dict(builtins_dict, state["builtins"], False, changed)
        for key in changed:
            (tampered if key in tools["dispatch_builtins"] else repaired).append(
                f"builtins.{key}" if key in tools["dispatch_builtins"] else f"builtins ({key})")

    def restore_runtime(kind, repaired):
        """What runs beside the test: threads, tracers, timers, signal handlers, gc callbacks.

        Threads are stopped in a grading kernel only. In-process ("local": unit tests, ``%load_ext``)
        the threads started after install are the host's: pytest hung at exit joining an idle
        executor worker of its own that had been sent the never-returning stop."""
        if kind != "local":
            park_threads(repaired)
        sys_mod.settrace(None)
        sys_mod.setprofile(None)
        tools["threading_settrace"](None)
        tools["threading_setprofile"](None)
        for which in (signal_mod.ITIMER_REAL, signal_mod.ITIMER_VIRTUAL, signal_mod.ITIMER_PROF):
            try:
                if signal_mod.getitimer(which)[0] or signal_mod.getitimer(which)[1]:
                    signal_mod.setitimer(which, 0)
                    repaired.append("interval timer")
            except (OSError, ValueError):
                pass
        for signum, handler in (baseline.get("handlers") or state["handlers"]).items():
            try:
                if signal_mod.getsignal(signum) is not handler:
                    signal_mod.signal(signum, handler)
                    repaired.append(f"signal handler {signum}")
            except (OSError, ValueError, TypeError):
                pass
        if kind == "test":
            if not baseline["frozen"]:
                # Everything alive at the first test (the libraries, the loaded model: about a
                # million objects with torch and transformers) leaves the collector's view, so the
                # collection before each later test scans only what the notebook made since
                # (0.2-0.3 s -> milliseconds, twice per test cell). What is frozen and later
                # becomes cyclic garbage is not reclaimed until the kernel exits.
                gc_mod.freeze()
                baseline["frozen"] = True
        sys_mod.setswitchinterval(state["switch"])
        sys_mod.excepthook = state["excepthook"]
        sys_mod.stdout, sys_mod.stderr = state["stdout"], state["stderr"]

    def restore_imports(repaired):
        """sys.modules and the import system."""
        for name, module in state["all_modules"].items():
            if module is not None and modules_dict.get(name, MISSING) is not module:
                modules_dict[name] = module
                repaired.append(f"sys.modules[{name!r}]")
        for name, module in state["modules_entries"].items():
            if modules_dict.get(name) is not module:
                modules_dict[name] = module
                repaired.append(f"sys.modules[{name!r}]")
        meta_path = sys_mod.meta_path
        for position in range(len(meta_path) - 1, -1, -1):
            finder = meta_path[position]
            if all(finder is not g for g in state["meta_path"]) and module_of(finder) in (None, "__main__"):
                del meta_path[position]
                repaired.append("import hook (sys.meta_path)")
        if state["finder"] is not None and all(f is not state["finder"] for f in meta_path):
            meta_path.insert(0, state["finder"])

    def restore_snapshots(repaired):
        """The comparison modules (numpy, torch, math...), the kit's helpers, and their classes."""
        for name, (module, pristine) in state["snapshots"].items():
            changed = []
            only_callables = (("." in name and name.split(".")[0] in ("numpy", "torch"))
                              or name in state["callables_only"])
            restore_dict(vars(module), pristine, only_callables, changed)
            if changed:
                repaired.append(", ".join(f"{name}.{key}" for key in changed[:8]))
        for cls, pristine in state["classes"]:
            for key, value in list(vars(cls).items()):
                if key not in pristine and type(value) is function_type and value.__module__ in (None, "__main__"):
                    try:  # a method the notebook added (torch.Tensor.allclose = ...) hiding the C one
                        delattr(cls, key)
                        repaired.append(f"{cls.__name__}.{key}")
                    except (TypeError, AttributeError):
                        pass
            for key, value in pristine.items():
                if vars(cls).get(key, MISSING) is not value:
                    try:
                        setattr(cls, key, value)
                        repaired.append(f"{cls.__name__}.{key}")
                    except (TypeError, AttributeError):
                        pass

    def restore_instances(tampered):
        """Instance attributes of the kernel's own objects hiding their methods."""
        for _key, attrs in baseline["instances"].items():
            current = vars(attrs[0])
            for key, value in list(current.items()):
                before = attrs[1].get(key, MISSING)
                if value is before or is_machinery(value):
                    continue  # IPython itself wraps stream.write around every cell
                if before is MISSING and callable(value) and type(value) is not type:
                    del current[key]  # an instance attribute hiding a method (session.send = ...)
                    tampered.append(f"{type(attrs[0]).__name__}.{key}")
                elif before is not MISSING and callable(before) and type(before) is not type:
                    current[key] = before
                    tampered.append(f"{type(attrs[0]).__name__}.{key}")

    def restore_shell(shell, repaired, tampered):
        """IPython's transformers, exception handlers, event callbacks and shell methods."""
        saved = state["ipython"]
        manager = shell.input_transformer_manager
        for attr, key in (("cleanup_transforms", "input_transformers_cleanup"),
                          ("line_transforms", "line_transforms"), ("token_transformers", "token_transformers")):
            current = manager.__dict__.get(attr, MISSING)
            if current is not MISSING and (type(current) is not list or not same(current, saved[key])):
                manager.__dict__[attr] = list(saved[key])
                tampered.append(f"input transformers ({attr})")
        for attr, key in (("input_transformers_post", "input_transformers_post"),
                          ("ast_transformers", "ast_transformers")):
            current = shell.__dict__.get("_trait_values", {}).get(attr, MISSING)
            if current is MISSING:
                current = shell.__dict__.get(attr, MISSING)
            if current is not MISSING and (type(current) is not list or not same(current, saved[key])):
                setattr(shell, attr, list(saved[key]))
                tampered.append(attr)
        if shell.__dict__.get("custom_exceptions", ()) != ():
            shell.custom_exceptions = ()
            tampered.append("custom exception handler")
        for name, cbs in shell.events.callbacks.items():
            kept = [cb for cb in cbs if module_of(cb) not in (None, "__main__")]
            if len(kept) != len(cbs):
                cbs[:] = kept
                repaired.append(f"event callbacks ({name})")
        for attr in tools["shell_methods"]:
            if attr in vars(shell) and attr not in saved["instance_attrs"]:
                delattr(shell, attr)  # an instance attribute hiding a method (shell.run_cell = ...)
                tampered.append(f"shell.{attr}")

    def restore_namespace(shell, repaired):
        """Globals shadowing a builtin, and stand-ins for the usual module aliases (np, torch...)."""
        namespace = shell.user_ns
        pristine_builtins = state["builtins"]
        for name in list(namespace):
            if (type(name) is str and name in pristine_builtins and not name.startswith("_")
                    and name not in tools["ipython_managed"] and namespace[name] is not pristine_builtins[name]):
                del namespace[name]
                repaired.append(f"global {name!r} shadowing a builtin")
        for alias, module_name in tools["aliases"].items():
            real = state["modules_entries"].get(module_name) or modules_dict.get(module_name)
            value = namespace.get(alias, real)
            # only stand-ins for the module (another module, a notebook-made object); `F = features` stays
            if real is not None and value is not real and (
                    type(value) is module_type or type(value) is namespace_type or module_of(value) == "__main__"):
                namespace[alias] = real
                repaired.append(f"global {alias!r}")

    def collect_garbage(kind, repaired):
        """The collector as it was, then the notebook's garbage collected *now*, before anything is
        restored: a ``__del__``, weakref callback or ``weakref.finalize`` of the notebook's runs
        here, where whatever it patches is put back next, not in the middle of the comparisons.
        Before a test cell, what ``autograder.kernel.exact`` kept alive is let go first."""
        if not same(gc_mod.callbacks, state["gc_callbacks"]):
            gc_mod.callbacks[:] = state["gc_callbacks"]
            repaired.append("gc.callbacks")
        if gc_mod.get_threshold() != state["gc_threshold"]:
            gc_mod.set_threshold(*state["gc_threshold"])
            repaired.append("gc thresholds")
        if not gc_mod.isenabled():
            gc_mod.enable()
        if kind == "local":
            return
        exact = state["snapshots"].get("autograder.kernel.exact")
        kept = exact[1].get("_KEPT") if exact is not None else None
        if kind == "test" and type(kept) is list:
            kept.clear()
        for _ in range(3):  # a finalizer may leave garbage of its own
            if not gc_mod.collect():
                break

    def restore(kind, caller=None):
        """kind: "test" (before a test cell), "inline" (from exact, mid-test), "local" (in-process)."""
        repaired, tampered = [], []
        collect_garbage(kind, repaired)  # first: finalizers run here, and everything below undoes them
        restore_builtins(repaired, tampered)  # everything below may use builtins
        if kind != "inline":
            restore_machinery(tampered)
        unguarded = [name for name in state["lazy"] if name in modules_dict and name not in state["snapshots"]]
        if unguarded:  # imported behind the guard's back (its import hook was removed)
            tampered.append("unguarded-import:" + ",".join(unguarded))
        if kind == "test":
            stack_is_pristine(caller, tampered)
        restore_runtime(kind, repaired)
        restore_imports(repaired)
        restore_snapshots(repaired)
        if kind == "inline":
            # the hidden test's own lookups (all, abs, np) go through the notebook's globals: a
            # student's function that set globals()["all"] while the test called it is undone too
            if state["shell"] is not None:
                restore_namespace(state["shell"], repaired)
            return repaired, tampered
        restore_instances(tampered)
        shell = state["shell"]
        # during a cell IPython's display trap puts the shell's own hook there
        sys_mod.displayhook = shell.displayhook if shell is not None else state["displayhook"]
        if shell is not None:
            restore_shell(shell, repaired, tampered)
            restore_namespace(shell, repaired)
        return repaired, tampered

    def set_baseline(objects):
        """Threads and instance attributes once the kernel is up, before any notebook cell."""
        if baseline["set"]:
            return False
        baseline["set"] = True
        baseline["threads"] |= set(current_frames())
        handlers = {}
        for signum in state["handlers"]:  # ipykernel installs its SIGINT handler after install()
            try:
                handlers[signum] = signal_mod.getsignal(signum)
            except (ValueError, OSError):
                pass
        baseline["handlers"] = handlers
        for obj in objects:
            if obj is not None:
                try:
                    baseline["instances"][id(obj)] = (obj, dict(vars(obj)))
                except TypeError:
                    pass
        return True

    return restore, set_baseline


def _tools() -> dict:
    import _thread
    import ctypes
    import gc
    import signal
    import threading
    import time

    set_async_exc = ctypes.PyDLL(None).PyThreadState_SetAsyncExc
    set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_async_exc.restype = ctypes.c_int
    return {
        "missing": object(), "builtins_dict": vars(builtins), "sys": sys, "modules_dict": sys.modules, "gc": gc,
        "signal": signal, "thread": _thread, "function_type": types.FunctionType, "module_type": types.ModuleType,
        "namespace_type": types.SimpleNamespace, "set_async_exc": set_async_exc, "py_object": ctypes.py_object,
        "method_type": types.MethodType, "type_module": type.__dict__["__module__"].__get__,
        "plain_types": (type(None), bool, int, float, str, bytes),
        "c_ulong": ctypes.c_ulong, "current_frames": sys._current_frames, "sleep": time.sleep,
        "getframe": sys._getframe,
        "threading_settrace": threading.settrace, "threading_setprofile": threading.setprofile,
        "dispatch_builtins": DISPATCH_BUILTINS, "shell_methods": SHELL_METHODS, "ipython_managed": IPYTHON_MANAGED,
        "aliases": dict(ALIASES),
    }


def restore() -> str:
    """Put everything recorded by :func:`install` back; returns a line naming what was repaired
    (in-process use: unit tests and ``%load_ext``; a sealed kernel answers only its audit hook)."""
    if not _state:
        return "guard not installed"
    if "restore" not in _state:
        _state["restore"], _ = _make_restorer(_state, _tools())
    repaired, tampered = _state["restore"]("local", None)
    unguarded = [r for r in tampered if r.startswith("unguarded-import:")]
    if unguarded:
        return "autograder-guard-unsafe: " + unguarded[0].split(":", 1)[1] + " imported without the guard"
    names = list(dict.fromkeys(repaired + tampered))
    return OK + (": repaired " + ", ".join(names) if names else "")


def signature(key: bytes, nonce: str, status: str) -> str:
    import hmac

    return hmac.new(key, f"{nonce}\n{status}".encode(), "sha256").hexdigest()


def _make_hook(restore_fn, set_baseline, key, tools, stdout, protected, objects):
    """The audit hook (created with private globals by seal(): see the module docstring)."""
    hmac_digest, code_type = tools["hmac_digest"], tools["code_type"]
    get_ident, getframe = tools["get_ident"], tools["getframe"]
    blocked = tools["blocked"]
    protected_names = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
    mark, mark_inline, mark_baseline, reply_word = tools["marks"]
    busy = [0]

    def reply(nonce, status):
        mac = hmac_digest(key, (nonce + "\n" + status).encode(), "sha256").hex()
        stdout.write("\n" + reply_word + " " + nonce + " " + status + " " + mac + "\n")
        stdout.flush()

    def hook(event, args):
        if event == "exec":
            code = args[0] if args else None
            if type(code) is not code_type:
                return
            names = code.co_names
            if mark in names:
                nonce = ""
                for const in code.co_consts:
                    if type(const) is str:
                        nonce = const
                        break
                busy[0] = get_ident()
                try:
                    repaired, tampered = restore_fn("test", getframe(1))
                    if tampered:
                        status = "tampered:" + ";".join(tampered[:6])
                    elif repaired:
                        status = "repaired:" + ";".join(dict.fromkeys(repaired))
                    else:
                        status = "ok"
                except BaseException as error:  # noqa: BLE001 - fail closed: the test is not trusted
                    status = "tampered:guard-error:" + type(error).__name__
                finally:
                    busy[0] = 0
                reply(nonce, status.replace("%", "%25").replace(" ", "%20").replace("\n", "%0A")[:4000])
            elif mark_inline in names:
                busy[0] = get_ident()
                try:
                    restore_fn("inline", None)
                finally:
                    busy[0] = 0
            elif mark_baseline in names:
                busy[0] = get_ident()
                try:
                    set_baseline(objects)
                finally:
                    busy[0] = 0
            return
        if event == "sys.addaudithook":
            raise RuntimeError("audit hooks are not available while grading")
        if event in blocked and busy[0] != get_ident():
            raise RuntimeError(event + " is not available while grading")
        if event == "object.__setattr__" and len(args) > 1 and args[1] in protected_names and id(args[0]) in protected:
            raise RuntimeError("replacing " + str(args[1]) + " of a function the grader relies on is not allowed")

    return hook


def seal(key: bytes, shell=None, kernel=None) -> None:
    """Move the recorded state into an audit hook nothing in the kernel can reach (see above)."""
    global _state
    import _hashlib
    import threading

    state, _state = _state, {}  # nothing left in this module leads to the sealed state
    tools = _tools()
    tools.update(hmac_digest=_hashlib.hmac_digest, code_type=types.CodeType, get_ident=threading.get_ident,
                 blocked=BLOCKED_EVENTS, marks=(MARK, MARK_INLINE, MARK_BASELINE, REPLY))
    private = {"__builtins__": dict(vars(builtins)), "__name__": "autograder.kernel.guard.sealed"}
    restore_fn, set_baseline = types.FunctionType(_make_restorer.__code__, private, "sealed")(state, tools)
    objects = [shell, kernel, getattr(kernel, "session", None), getattr(shell, "displayhook", None),
               getattr(shell, "display_pub", None), getattr(shell, "compile", None), sys.stdout, sys.stderr]
    hook = types.FunctionType(_make_hook.__code__, private, "sealed_hook")(
        restore_fn, set_baseline, key, tools, state["stdout"], state["protected"], objects)
    sys.addaudithook(hook)


def load_ipython_extension(shell) -> None:  # `%load_ext autograder.kernel.guard` for manual use
    install(shell)
