"""Three layout rules the kit keeps, checked by tests/test_code_layout.py and printable by hand:

    python -m tools.code_layout            # import circles, long functions, long parameter lists

* no import circle between the modules of one package (``autograder`` or ``helpers``), counting
  imports inside functions (they hide a circle, they do not remove it);
* no function or method in ``autograder/`` or ``helpers/`` longer than 80 lines of its own (nested
  functions' lines count for the nested function, not for the one around it);
* no function or method there with more than six parameters (``self``, ``cls`` and an autograd
  Function's ``ctx`` not counted): more travel together as a typed value (``outcome.Request``,
  ``grpo.Decoding``, ``irl.Expert``), or are forwarded into one (``grpo.sample_completions``'s
  arguments after ``num_generations``, by position or name, fill a ``Decoding``).
"""
from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "helpers")
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 6
def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``path`` imports anywhere in its body."""
    module = module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = _resolve(module, node, path.name == "__init__.py")
        else:
            continue
        found |= {name for name in names if name in known and name != module}
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    files = {module_name(p): p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts}
    known = set(files)
    graph = {name: imports_of(path, known) for name, path in files.items()}
    for name in graph:  # importing a.b.c runs a and a.b: a package's __init__ is not a circle partner
        graph[name] = {dep for dep in graph[name] if not name.startswith(dep + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = itertools.count()

    def visit(node):
        index[node] = low[node] = next(counter)
        stack.append(node)
        on_stack.add(node)
        for dep in graph.get(node, ()):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def own_lines(node: ast.AST) -> int:
    """Lines of a function less the lines of the functions and classes nested in it."""
    total = node.end_lineno - node.lineno + 1
    for child in ast.walk(node):
        if child is not node and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not any(child is not other and _inside(child, other, node) for other in ast.walk(node)):
                total -= child.end_lineno - child.lineno + 1
    return total


def _inside(child, other, root) -> bool:
    """True when ``child`` is nested in another function/class that is itself inside ``root``."""
    if other is root or not isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return other.lineno < child.lineno and child.end_lineno <= other.end_lineno


def long_functions(package: str = "autograder", limit: int = MAX_FUNCTION_LINES) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and own_lines(node) > limit:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {own_lines(node)} lines")
    return found


def many_parameters(package: str = "autograder", limit: int = MAX_PARAMETERS) -> list[str]:
    """``path:function (n)`` for each function of ``package`` taking more than ``limit`` parameters."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
                count = len(names) + bool(args.vararg) + bool(args.kwarg) - (names[:1] in (["self"], ["cls"], ["ctx"]))
                if count > limit:
                    found.append(f"{path.relative_to(ROOT)}:{node.name} ({count})")
    return found


def main() -> int:
    problems = [f"import circle in {pkg}: {' <-> '.join(c)}" for pkg in PACKAGES for c in cycles(import_graph(pkg))]
    problems += [f"function over {MAX_FUNCTION_LINES} lines: {line}" for pkg in PACKAGES
                 for line in long_functions(pkg)]
    problems += [f"function with over {MAX_PARAMETERS} parameters: {line}" for pkg in PACKAGES
                 for line in many_parameters(pkg)]
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
