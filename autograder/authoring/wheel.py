"""The student wheel: the ``helpers`` package alone, as ``course-kit-helpers``."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from autograder.authoring.stamping import DISTRIBUTION, ReleaseError, kit_version, wheel_name
from autograder.manifest import REPO_ROOT

# --------------------------------------------------------------------------------------
# The wheel of `helpers`
# --------------------------------------------------------------------------------------


def runtime_dependencies(root: Path = REPO_ROOT) -> list[str]:
    """``[project] dependencies`` of the kit's pyproject.toml: the wheel declares the same."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project.get("dependencies", []))


STUDENT_EXTRAS = ("gpu", "jupyter")
"""Extras of the kit's pyproject.toml the wheel carries too: ``gpu`` (bitsandbytes, which only
works with a CUDA GPU: the Colab install cell asks for it on a GPU runtime) and ``jupyter``
(Jupyter and the ``python3`` kernel, which the student README installs on a laptop)."""


def student_extras(root: Path = REPO_ROOT) -> dict[str, list[str]]:
    """``[project.optional-dependencies]`` named in :data:`STUDENT_EXTRAS`."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return {name: list(extras.get(name, [])) for name in STUDENT_EXTRAS}


WHEEL_DESCRIPTION = ("Scaffolding the course notebooks import: environment, models, GRPO plumbing, math rewards, "
                     "Colab runtime, submission packing")


def _wheel_pyproject(version: str, dependencies: list[str], requires_python: str,
                     extras: dict[str, list[str]] | None = None) -> str:
    deps = "".join(f"    {json.dumps(d)},\n" for d in dependencies)
    optional = "".join(f"{name} = {json.dumps(items)}\n" for name, items in (extras or {}).items())
    return f'''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{DISTRIBUTION}"
version = "{version}"
description = {json.dumps(WHEEL_DESCRIPTION)}
requires-python = "{requires_python}"
readme = "README.md"
dependencies = [
{deps}]

[project.optional-dependencies]
{optional}
[tool.setuptools]
packages.find.include = ["helpers*"]
include-package-data = true

[tool.setuptools.package-data]
"*" = ["**/*"]
'''


def build_wheel(out_dir: Path, root: Path = REPO_ROOT) -> Path:
    """Build ``out_dir/course_kit_helpers-<version>-py3-none-any.whl`` from a copy of
    ``root/helpers`` (caches and compiled files left out) and a generated pyproject.toml."""
    root = Path(root)
    version = kit_version(root)
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="helpers-wheel-") as scratch:
        src = Path(scratch) / "src"
        shutil.copytree(root / "helpers", src / "helpers",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.lock"))
        (src / "pyproject.toml").write_text(_wheel_pyproject(version, runtime_dependencies(root),
                                                             project.get("requires-python", ">=3.11"),
                                                             student_extras(root)))
        (src / "README.md").write_text(
            "# course-kit-helpers\n\nThe `helpers` package imported by the course notebooks. Install it from the "
            "course's release (the first cell of every notebook does that on Colab).\n")
        build = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", str(Path(scratch) / "wheel"), str(src)],
            capture_output=True, text=True,
        )
        built = list((Path(scratch) / "wheel").glob("*.whl"))
        if build.returncode != 0 or len(built) != 1:
            raise ReleaseError(f"building the helpers wheel failed:\n{build.stdout[-2000:]}{build.stderr[-2000:]}")
        target = out_dir / wheel_name(version)
        if built[0].name != target.name:
            raise ReleaseError(f"the wheel came out as {built[0].name}, expected {target.name}")
        shutil.copy(built[0], target)
    return target


FORBIDDEN_IN_WHEEL = ("autograder/", "solutions/", "samples/", "tests/")


def wheel_problems(wheel: Path) -> list[str]:
    """Members of the wheel that are not the ``helpers`` package or its metadata."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    problems = [f"{wheel.name} holds {name}" for name in names
                if not (name.startswith("helpers/") or ".dist-info/" in name)
                or any(part in name for part in FORBIDDEN_IN_WHEEL)]
    if not any(name == "helpers/__init__.py" for name in names):
        problems.append(f"{wheel.name} has no helpers/__init__.py")
    return problems
