"""The student release: `python -m autograder release`, its wheel in a fresh venv, the install
cell in every case it meets, and declared dependencies that Colab's versions satisfy."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import helpers
from autograder.authoring import leaks, stamping
from autograder.authoring import release as rel
from autograder.authoring import wheel as student_wheel
from autograder.manifest import REPO_ROOT, load_assignments

IDS = tuple(a.id for a in load_assignments(REPO_ROOT))
COLAB_2026_08 = {"torch": "2.11.0", "transformers": "5.15.0", "peft": "0.20.0", "datasets": "4.0.0",
                 "matplotlib": "3.10.0", "numpy": "2.1.0"}
"""googlecolab/backend-info, 2026-08 (DESIGN.md): what Colab preinstalls."""
CORRECT = " 7 + 5 = 12 </think> <answer> 12 </answer>"


def setup_source(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return next(c.source for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")


# --------------------------------------------------------------------------------------
# Settings, stamping, dependencies (fast)
# --------------------------------------------------------------------------------------


def test_committed_releases_carry_the_course_url_and_version():
    url, version = stamping.install_url(), helpers.__version__
    for assignment_id in IDS:
        source = setup_source(REPO_ROOT / "notebooks" / assignment_id / f"{assignment_id}.ipynb")
        assert f'KIT_URL = "{url}"' in source and f'KIT_VERSION = "{version}"' in source
        assert "find_spec" not in source and "importlib.metadata" in source
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True).stdout.split()
    holders = [name for name in tracked if (REPO_ROOT / name).is_file()
               and name not in ("tests/test_release.py", "autograder/authoring/stamping.py",  # they reject it
                                "README.md", "course.toml")  # they describe what is rejected (a comment)
               and "REPLACE_ME" in (REPO_ROOT / name).read_text(errors="replace")]
    assert holders == []


def test_install_url_setting(tmp_path):
    (tmp_path / "course.toml").write_text('[release]\ninstall_url = "https://raw.githubusercontent.com/uni-rl/rel/main/"\n')
    assert stamping.install_url(tmp_path) == "https://raw.githubusercontent.com/uni-rl/rel/main"
    assert stamping.install_url(tmp_path, "file:///srv/rel") == "file:///srv/rel"
    for bad in ('[release]\ninstall_url = "https://github.com/REPLACE_ME/x"\n', '[release]\n', "not toml ["):
        (tmp_path / "course.toml").write_text(bad)
        with pytest.raises(stamping.ReleaseError) as error:
            stamping.install_url(tmp_path)
        assert "\n" not in str(error.value) and "course.toml" in str(error.value)
    assert stamping.install_requirement("https://h/r", "1.2.3") == \
        "course-kit-helpers @ https://h/r/dist/course_kit_helpers-1.2.3-py3-none-any.whl"
    assert stamping.install_requirement("https://h/r", "1.2.3", ("jupyter",)) == \
        "course-kit-helpers[jupyter] @ https://h/r/dist/course_kit_helpers-1.2.3-py3-none-any.whl"
    stamped = stamping.stamp_source('x = 1\nKIT_VERSION = "0"\nKIT_URL = "old"\n', "https://new", "9.9")
    assert stamped == 'x = 1\nKIT_VERSION = "9.9"\nKIT_URL = "https://new"\n'


@pytest.mark.parametrize("url", [
    "https://raw.githubusercontent.com/<you>/<release-repo>/main", "https://raw.githubusercontent.com/{owner}/r/main",
    "https://github.com/REPLACE_ME/x", "https://CHANGE-ME.github.io/rel", "https://raw.githubusercontent.com/your-org/r/main",
    "https://example.org/rel", "https://www.example.com/rel", "http://course.example/rel", "https://rel.invalid:8080/x",
])
def test_a_placeholder_url_stops_the_release_with_one_line(tmp_path, url):
    (tmp_path / "course.toml").write_text(f'[release]\ninstall_url = "{url}"\n')
    with pytest.raises(stamping.ReleaseError) as error:
        rel.release(load_assignments(REPO_ROOT, ["maxent_irl"]), tmp_path / "out", root=tmp_path)
    message = str(error.value)
    assert "\n" not in message and "placeholder" in message and "course.toml" in message and "--install-url" in message
    assert not (tmp_path / "out").exists()
    assert stamping.install_url(tmp_path, allow_placeholder=True) == url.rstrip("/")  # generate and grading go on


def test_the_default_url_and_the_readme_are_consistent():
    url = stamping.install_url()  # course.toml as committed: the project's own published release
    assert stamping.placeholder(url) == "" and url.startswith("https://raw.githubusercontent.com/")
    readme = (REPO_ROOT / "README.md").read_text()
    example = re.search(r"e\.g\.\s+`(https://raw\.githubusercontent\.com/[^`]+)`", readme).group(1)
    assert stamping.placeholder(example), f"the README's example {example} would pass as a real URL"
    for word in ("placeholder", "install_url", "course.toml"):
        assert word in readme


def test_release_notebooks_carry_kernelspec_and_language_info():
    for assignment_id in IDS:
        path = REPO_ROOT / "notebooks" / assignment_id / f"{assignment_id}.ipynb"
        metadata = nbformat.read(path, as_version=4).metadata
        assert metadata["kernelspec"] == stamping.KERNELSPEC and metadata["language_info"] == stamping.LANGUAGE_INFO
        assert metadata["language_info"]["file_extension"] == ".py"


def test_every_setup_cell_is_the_one_template_and_asks_for_gpu_extras_on_colab_only():
    sources = {i: setup_source(REPO_ROOT / "solutions" / i / f"{i}.ipynb") for i in IDS}
    assert set(sources.values()) == {stamping.setup_template()}
    source = stamping.setup_template()
    assert '"[gpu] @ "' in source and "/dev/nvidia0" in source and "torch==" in source
    assert "KIT = f\"course-kit-helpers @ " in source  # no torch pin and no extras in what a laptop is told


def _requirements(text: str) -> dict[str, Requirement]:
    found = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            found[requirement.name.lower()] = requirement
    return found


def test_declared_floors_are_met_by_our_pins_and_by_colab():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    declared = {Requirement(d).name.lower(): Requirement(d) for d in project["dependencies"]}
    assert {"torch", "transformers", "peft", "accelerate", "datasets", "math-verify", "numpy",
            "matplotlib", "tqdm", "filelock", "safetensors"} <= set(declared)
    extras = project["optional-dependencies"]
    # GPU-only packages are never installed where they cannot work: bitsandbytes is the gpu extra
    assert "bitsandbytes" not in declared
    assert [str(Requirement(d)) for d in extras["gpu"]] == ['bitsandbytes>=0.45; sys_platform == "linux"']
    assert {Requirement(d).name.lower() for d in extras["jupyter"]} == {"jupyterlab", "ipykernel"}
    assert all(s.operator == ">=" for r in declared.values() for s in r.specifier), "floors only, never pins"
    assert all(s.operator == ">=" for d in extras["gpu"] + extras["jupyter"] for s in Requirement(d).specifier)
    pins = _requirements((REPO_ROOT / "requirements.txt").read_text())
    gpu_pins = _requirements((REPO_ROOT / "requirements-gpu.txt").read_text())
    # the gpu extra's pins live apart: `make install` adds them only where torch sees CUDA
    assert set(gpu_pins) == {Requirement(d).name.lower() for d in extras["gpu"]} and not set(gpu_pins) & set(pins)
    pins.update(gpu_pins)
    optional = [Requirement(d) for name in ("grader", "dev", "gpu", "jupyter") for d in extras[name]]
    for name in [*declared, *(r.name.lower() for r in optional)]:
        assert name in pins, f"requirements.txt pins no {name}"
        pinned = next(iter(pins[name].specifier)).version
        wanted = declared.get(name) or next(r for r in optional if r.name.lower() == name)
        assert wanted.specifier.contains(pinned, prereleases=True), (name, pinned, str(wanted))
    for name, version in COLAB_2026_08.items():
        assert declared[name].specifier.contains(Version(version)), f"Colab's {name} {version} fails {declared[name]}"
    assert {"nbgrader", "nbclient", "nbconvert", "jupyterlab", "ray", "psutil"} <= {
        Requirement(d).name.lower() for d in extras["grader"]}
    assert [Requirement(d).name for d in extras["dev"]] == ["pytest", "pytest-randomly", "ruff"]
    assert set(student_wheel.student_extras()) == {"gpu", "jupyter"}


# --------------------------------------------------------------------------------------
# Nothing protected leaves the kit (fast)
# --------------------------------------------------------------------------------------


def test_leak_check_finds_a_planted_line(tmp_path):
    lines = leaks.protected_lines(REPO_ROOT / "solutions")
    assert len(lines) > 500
    hidden = next(line for line, origin in lines.items() if "hidden test" in origin)
    answer = next(line for line, origin in lines.items() if "(solution)" in origin)
    (tmp_path / "notes.md").write_text(f"intro\n    {hidden}\n")
    with zipfile.ZipFile(tmp_path / "pkg.whl", "w") as archive:
        archive.writestr("helpers/extra.py", f"def f():\n    {answer}\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"{answer}\nprint(1)")])
    nbformat.write(notebook, tmp_path / "nb.ipynb")  # stored as JSON: found through its cells
    found = leaks.find_leaks(tmp_path, lines)
    assert any(leak.startswith("notes.md: ") and leak.endswith(hidden) for leak in found)
    assert any(leak.startswith("pkg.whl!helpers/extra.py: ") for leak in found)
    assert any(leak.startswith("nb.ipynb: ") for leak in found)


def test_release_refuses_when_the_wheel_would_hold_an_answer(tmp_path):
    """A course whose solution block repeats a line of helpers/: the release stops, writes nothing."""
    root = tmp_path / "course"
    shutil.copytree(REPO_ROOT / "tests" / "fixtures" / "course" / "solutions", root / "solutions")
    source = root / "solutions" / "toy_add" / "toy_add.ipynb"
    notebook = nbformat.read(source, as_version=4)
    line = "def r1_zero_reward_fn(response: str, ground_truth, fast: bool = True) -> dict[str, float]:"
    cell = next(c for c in notebook.cells if "### BEGIN SOLUTION" in c.source)
    cell.source = cell.source.replace("### BEGIN SOLUTION", f"### BEGIN SOLUTION\n    {line}", 1)
    nbformat.write(notebook, source)
    with pytest.raises(stamping.ReleaseError) as error:
        rel.release(load_assignments(root), tmp_path / "out", root=root, url="https://courses.test/rel")
    assert "helpers/math_tasks.py" in str(error.value) and line in str(error.value)
    assert not (tmp_path / "out").exists()


def test_student_readme_gives_a_laptop_everything_and_nothing_gpu_only():
    import importlib.util

    spec = importlib.util.spec_from_file_location("laptop_like", REPO_ROOT / ".ci" / "laptop_like.py")
    laptop_like = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(laptop_like)
    url = "https://raw.githubusercontent.com/uni-rl/rel/main"
    readme = rel.STUDENT_README.format(
        title="T", distribution=stamping.DISTRIBUTION, version="9.9", cpu_index=stamping.CPU_TORCH_INDEX,
        laptop_requirement=stamping.install_requirement(url, "9.9", ("jupyter",)), wheel_url="W")
    commands = laptop_like.readme_commands(readme)
    wheel = f"{url}/dist/course_kit_helpers-9.9-py3-none-any.whl"
    assert commands == [f"pip install torch --index-url {stamping.CPU_TORCH_INDEX}",
                        f'pip install "course-kit-helpers[jupyter] @ {wheel}"']
    assert "jupyter lab" in readme and "python3 -m venv .venv" in readme and "gpu" not in commands[1]
    argv = laptop_like.as_run(commands[0], Path("/venv/bin/python"), Path("/wheels/torch-2.13.0+cpu.whl"))
    assert argv == ["/venv/bin/python", "-m", "pip", "install", "-q", "--no-compile", "/wheels/torch-2.13.0+cpu.whl"]
    argv = laptop_like.as_run(commands[1], Path("/venv/bin/python"), None)
    assert argv[-1].startswith("course-kit-helpers[jupyter] @ https://")


# --------------------------------------------------------------------------------------
# --out: only what a release wrote is ever replaced (fast: staged folders, no build)
# --------------------------------------------------------------------------------------


def _staged(where: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    return where


def test_release_into_a_git_clone_keeps_git_and_everything_else(tmp_path):
    out = tmp_path / "clone"
    out.mkdir()
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    (out / "LICENSE").write_text("CC-BY")
    (out / "notebooks").mkdir()
    (out / "notebooks" / "instructor-notes.md").write_text("mine")
    first = _staged(tmp_path / "first", {"README.md": "v1", "dist/kit-0.1.0.whl": "wheel 1",
                                         "notebooks/a/a.ipynb": "{}"})
    lines = rel.write_out(first, out)
    assert any(line.startswith("kept:") and ".git" in line and "LICENSE" in line for line in lines), lines
    assert (out / "LICENSE").read_text() == "CC-BY" and (out / "notebooks" / "instructor-notes.md").exists()
    assert subprocess.run(["git", "-C", str(out), "status", "--short"], capture_output=True, text=True).returncode == 0
    assert (out / "README.md").read_text() == "v1" and (out / rel.MARKER).exists()

    # the next release: replaces its own files (saying which were edited), removes its stale ones only
    (out / "README.md").write_text("v1, edited by hand")
    second = _staged(tmp_path / "second", {"README.md": "v2", "dist/kit-0.2.0.whl": "wheel 2",
                                           "notebooks/a/a.ipynb": "{}"})
    lines = rel.write_out(second, out)
    assert any(line.startswith("replaced: 2 file(s)") and "README.md edited since then" in line for line in lines)
    assert any(line.startswith("removed:  dist/kit-0.1.0.whl") for line in lines), lines
    assert sorted(p.name for p in (out / "dist").iterdir()) == ["kit-0.2.0.whl"]
    assert (out / "LICENSE").read_text() == "CC-BY" and (out / ".git" / "HEAD").exists()
    assert (out / "notebooks" / "instructor-notes.md").read_text() == "mine"


def test_release_refuses_to_overwrite_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "repo"
    out.mkdir()
    (out / "README.md").write_text("the instructor's own README")
    staged = _staged(tmp_path / "staged", {"README.md": "student README", "dist/kit.whl": "w"})
    with pytest.raises(stamping.ReleaseError) as error:
        rel.write_out(staged, out)
    assert "README.md" in str(error.value) and "nothing was written" in str(error.value)
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
    assert (out / "README.md").read_text() == "the instructor's own README"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(stamping.ReleaseError, match="is a file"):
        rel.write_out(staged, tmp_path / "afile")


# --------------------------------------------------------------------------------------
# The real release, its wheel in a fresh venv, the install cell (slow: ~1 min)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "release", "--out", str(out),
                          "--install-url", f"file://{out}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert f"install:  course-kit-helpers @ file://{out}/dist/" in run.stdout
    return out


@pytest.mark.slow
def test_release_layout_and_nothing_protected_inside(release_dir):
    files = sorted(str(p.relative_to(release_dir)) for p in release_dir.rglob("*") if p.is_file())
    wheel = release_dir / "dist" / stamping.wheel_name(helpers.__version__)
    assert files == [rel.MARKER, "README.md", f"dist/{wheel.name}",
                     *(f"notebooks/{i}/{i}.ipynb" for i in sorted(IDS))]
    for assignment_id in IDS:
        source = setup_source(release_dir / "notebooks" / assignment_id / f"{assignment_id}.ipynb")
        assert f'KIT_URL = "file://{release_dir}"' in source
    assert leaks.find_leaks(release_dir, leaks.protected_lines(REPO_ROOT / "solutions")) == []
    assert student_wheel.wheel_problems(wheel) == []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"course_kit_helpers-{helpers.__version__}.dist-info/METADATA").decode()
    shipped = {str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "helpers").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")}
    assert shipped <= names, f"missing from the wheel: {sorted(shipped - names)}"
    assert not any(n.startswith(("autograder/", "solutions/", "tests/")) or "samples" in n for n in names)
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    requires = [Requirement(line.removeprefix("Requires-Dist: ")) for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    always = [str(r) for r in requires if r.marker is None or "extra" not in str(r.marker)]
    assert always == [str(Requirement(d)) for d in project["dependencies"]]
    for extra in ("gpu", "jupyter"):
        assert f"Provides-Extra: {extra}" in metadata
        mine = sorted(r.name for r in requires if r.marker is not None and f'extra == "{extra}"' in str(r.marker))
        assert mine == sorted(Requirement(d).name for d in project["optional-dependencies"][extra])
    assert not any(r.name == "torch" and any(s.operator == "==" for s in r.specifier) for r in requires)
    assert "Name: course-kit-helpers" in metadata
    readme = (release_dir / "README.md").read_text()
    assert f"file://{release_dir}/dist/{wheel.name}" in readme and "REPLACE_ME" not in readme
    assert f"pip install torch --index-url {stamping.CPU_TORCH_INDEX}" in readme
    assert f'pip install "course-kit-helpers[jupyter] @ file://{release_dir}/dist/{wheel.name}"' in readme


def _fresh_venv(where: Path) -> Path:
    """A new venv that sees the kit venv's packages (torch 2.13.0 and the pinned deps) through a
    folder of links, minus the kit itself (course-kit, editable), so `helpers` can only come
    from the wheel."""
    venv.EnvBuilder(with_pip=True).create(where)
    shared = where / "shared-site"
    shared.mkdir()
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()))
    for entry in site.iterdir():
        if entry.name.startswith(("course_kit", "__editable__", "pip", "_distutils_hack", "distutils-precedence")):
            continue
        if entry.name in ("helpers", "autograder"):
            continue
        (shared / entry.name).symlink_to(entry)
    own_site = next((where / "lib").glob("python3*/site-packages"))
    (own_site / "kit-deps.pth").write_text(str(shared) + "\n")
    return where / "bin" / "python"


def _run_cell(python: Path, source: str, cwd: Path, fake_colab: bool = False) -> subprocess.CompletedProcess:
    prelude = ("import sys, types\nsys.modules['google.colab'] = types.ModuleType('google.colab')\n"
               if fake_colab else "")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLAB_RELEASE_TAG", "VIRTUAL_ENV")}
    return subprocess.run([str(python), "-c", prelude + source], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_wheel_installs_through_the_install_cell_and_works(release_dir, tmp_path, tiny_model_dir):
    python = _fresh_venv(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    (work / "helpers.py").write_text("raise RuntimeError('a stray helpers.py was imported')\n")  # must not fool it
    cell = setup_source(release_dir / "notebooks" / "math_grpo" / "math_grpo.ipynb")

    # not on Colab, kit missing: one line saying what to run, nothing installed
    local = _run_cell(python, cell, work)
    assert local.returncode == 0, local.stderr
    requirement = stamping.install_requirement(f"file://{release_dir}", helpers.__version__)
    assert local.stdout.splitlines() == [
        f"course kit: this notebook needs course-kit-helpers {helpers.__version__} and it is not installed in "
        f"{python}: run  pip install \"{requirement}\"  in that environment (the README says how, with a CPU "
        "torch), restart the kernel, run this cell again"]

    # on Colab: installs the wheel from the course URL, keeps torch, one line
    import torch

    colab = _run_cell(python, cell, work, fake_colab=True)
    assert colab.returncode == 0, colab.stderr
    assert colab.stdout.splitlines() == [
        f"course kit: installed course-kit-helpers {helpers.__version__} from file://{release_dir} "
        f"(torch {torch.__version__} untouched)"]
    again = _run_cell(python, cell, work, fake_colab=True)
    assert again.stdout.splitlines() == [f"course kit: course-kit-helpers {helpers.__version__} is installed"]

    # the installed helpers work: declared deps present, tiny model, a reward, the runtime helpers
    probe = f"""
import importlib.metadata as md, json, os, sys
from packaging.requirements import Requirement
import helpers
from helpers import lm, runtime, checkpoint, submission
from helpers.math_tasks import r1_zero_reward_fn
unmet = [r for r in md.requires("course-kit-helpers") if (req := Requirement(r)).marker is None or req.marker.evaluate()
         if not req.specifier.contains(md.version(req.name), prereleases=True)]
model, tokenizer = lm.load_policy("tiny", "unused/full-id")
ids = tokenizer(["Sort the digits: 3 1 2"], return_tensors="pt").input_ids
out = model.generate(input_ids=ids, min_new_tokens=3, max_new_tokens=3, do_sample=False)
print(json.dumps({{"file": helpers.__file__, "unmet": unmet, "reward": r1_zero_reward_fn({CORRECT!r}, "12")["reward"],
                  "new_tokens": out.shape[1] - ids.shape[1], "artifacts": str(runtime.artifacts_dir("math_grpo")),
                  "model_dir": lm.resolve_model("tiny", "unused/full-id")}}))
"""
    works = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                           env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                                "COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert works.returncode == 0, works.stderr[-3000:]
    report = json.loads(works.stdout.strip().splitlines()[-1])
    assert report["file"].startswith(str(tmp_path / "venv" / "lib")), report["file"]  # the wheel, not the repo
    assert report["model_dir"].startswith(str(tmp_path / "venv" / "lib")), report["model_dir"]  # package data
    assert report["unmet"] == [] and report["reward"] == 1.0 and report["new_tokens"] == 3
    assert report["artifacts"] == str(tmp_path / "artifacts")


def _title(notebook) -> str:
    return next(c.source for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "title")


@pytest.mark.parametrize("assignment", IDS)
def test_a_title_states_its_export_limit(assignment):
    """(Its points table is generated from the tests' POINTS: tests/test_points_home.py.)"""
    notebook = nbformat.read(REPO_ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    limit = next(a.export_limit for a in load_assignments(REPO_ROOT, [assignment]))
    assert limit is None or f"{limit:,} characters" in _title(notebook).replace(",\n", ", ").replace("\n", " ")


def test_release_warns_while_course_toml_holds_this_projects_own_url(tmp_path):
    """Issue 41: a course that forgot to set its own install URL is told so by `release`."""
    from autograder.authoring.release import PROJECT_URL, ReleaseReport

    wheel = tmp_path / "dist" / "w.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"0")
    ours = ReleaseReport(out=tmp_path, wheel=wheel, url=PROJECT_URL).lines()
    assert any(line.startswith("warning:") and "course.toml" in line for line in ours)
    theirs = ReleaseReport(out=tmp_path, wheel=wheel, url="https://raw.githubusercontent.com/me/course/main").lines()
    assert not any(line.startswith("warning:") for line in theirs)
    assert PROJECT_URL in (REPO_ROOT / "course.toml").read_text()
