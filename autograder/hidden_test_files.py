"""A hidden test's file: where it is named, how it is loaded, and what of it the kernel receives.

A graded test cell's hidden part is one call, ``hidden_test("<assignment>", "<test>")``
(:data:`HIDDEN_CALL`), naming ``solutions/<assignment>/tests/<test>.py``; its expected values are the
reference's observations in ``tests/expected.json`` (:data:`EXPECTED_FILE`). The grader imports the
whole file (:class:`HiddenTest`); the kernel gets ``probe`` and what it uses (:func:`kernel_source`).
How a report is judged is ``autograder.grading.hidden_tests``; authoring, the kernel and the reports
read this module only.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

HIDDEN_CALL = re.compile(r"hidden_test\(\s*['\"](?P<assignment>\w+)['\"]\s*,\s*['\"](?P<test>\w+)['\"]"
                         r"(?:\s*,\s*['\"](?P<cell>\w+)['\"])?\s*\)")
EXPECTED_FILE = "expected.json"


def named_in(source: str) -> str | None:
    """The hidden test a test cell's source calls, if any."""
    found = HIDDEN_CALL.search(source)
    return found.group("test") if found else None


@dataclass(frozen=True)
class HiddenTest:
    name: str
    path: Path

    @cached_property
    def module(self):
        """The whole file, imported in the grader (never in a kernel); shared files of its folder importable."""
        spec = importlib.util.spec_from_file_location(f"_hidden_{self.path.parent.parent.name}_{self.name}", self.path)
        module = importlib.util.module_from_spec(spec)
        folder = self.path.parent.resolve()  # resolved: a relative course root gives relative paths
        sys.path.insert(0, str(folder))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(folder))
            for name, loaded in list(sys.modules.items()):  # another assignment may share a file's name
                file = getattr(loaded, "__file__", None)
                if file and Path(file).resolve().parent == folder:
                    del sys.modules[name]
        return module

    def constant(self, name: str):
        """A literal the file assigns at its top level (``EVALUATE_WITH``, ``ARTIFACT``), read without importing
        it (the grader's own process never imports a test's libraries); None when it assigns none."""
        for node in ast.parse(self.path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
                try:
                    return ast.literal_eval(node.value)
                except ValueError:
                    return None
        return None

    @cached_property
    def kernel_source(self) -> str:
        return kernel_source(self.path.read_text(encoding="utf-8"), self.path.parent)

    @property
    def title(self) -> str:
        return getattr(self.module, "TODO", None) or (self.module.__doc__ or self.name).strip().splitlines()[0]

    @property
    def evaluated_with(self) -> str | None:
        """An evaluator that measures, outside the kernel, what the probe's report names (a student's own
        task) on the submitted artifact; the judge gets its answer as ``check.measurement``."""
        return getattr(self.module, "EVALUATE_WITH", None)

    @property
    def task_functions(self) -> tuple[str, ...]:
        """The student's task functions this test calls apart from the notebook (``autograder.grading.task_process``),
        from the answer cells ``TASK_CELLS``; its ``task_observations(got, task)`` adds what they returned."""
        return tuple(getattr(self.module, "TASK_FUNCTIONS", ()))

    @property
    def measured_by(self) -> str | None:
        """An evaluator whose measurement (made outside the kernel) decides this test; no probe runs."""
        return getattr(self.module, "MEASURED_BY", None)


def load(folder: Path) -> dict[str, HiddenTest]:
    folder = Path(folder)
    return {p.stem: HiddenTest(p.stem, p) for p in sorted(folder.glob("test_*.py"))}


def read_expected(folder: Path) -> dict:
    path = Path(folder) / EXPECTED_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def bound_names(node: ast.stmt) -> set[str]:
    """The top-level names one statement of a module binds (what `kernel_source` follows)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _shared_import(node: ast.stmt, folder: Path | None) -> Path | None:
    """The shared file of the tests folder a ``from _name import ...`` line reads, if it is one."""
    if folder is None or not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("_"):
        return None
    path = Path(folder) / f"{node.module}.py"
    return path if path.is_file() else None


def kernel_source(text: str, folder: Path | None = None, roots: tuple[str, ...] = ("probe",)) -> str:
    """What the kernel gets of a hidden-test file: ``probe`` and every top-level definition and
    import it uses, transitively (a ``from _shared import x`` of the tests folder is inlined the same
    way); ``judge``, ``HINTS`` and anything else only the grader reads stay here."""
    body = ast.parse(text).body
    by_name = {name: node for node in body for name in bound_names(node)}
    needed, queue = set(), list(roots)
    while queue:
        name = queue.pop()
        if name in needed or name not in by_name:
            continue
        needed.add(name)
        used = {n.id for n in ast.walk(by_name[name]) if isinstance(n, ast.Name)}
        queue.extend(used - needed)
    parts = []
    for node in body:
        names = bound_names(node) & needed
        if not names:
            continue
        shared = _shared_import(node, folder)
        if shared is not None:
            parts.append(kernel_source(shared.read_text(encoding="utf-8"), folder, tuple(sorted(names))).rstrip())
        else:
            parts.append(ast.unparse(node))
    return "\n".join(parts) + "\n"
