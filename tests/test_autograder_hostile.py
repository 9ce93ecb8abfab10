"""Hostile and broken submissions, graded in ONE batch with correct and blank ones placed after them.

The batch mixes the toy fixture course (``toy_add``), a small assignment of five functions and a
submitted adapter (``guarded``, in ``tests/fixtures/hostile_course``) and the real ``maxent_irl``.
Each attack is a file of ``tests/fixtures/hostile/`` (what it does, the score and status it must
get); a few malformed uploads are built here. Some submissions come through ``collect`` (a Canvas
ZIP with a ``..`` login, a late flag, a zip bomb and a ``helpers.submission.pack`` zip; a plain
folder download with Unicode name collisions and a FIFO).

What must hold: every correct submission full marks, no unearned point, the batch completes with a
row per submission, OUT written only by the grader, no hidden-test line or reference answer in any
feedback file, no expected value anywhere a kernel can look, nothing left running, nothing written
outside OUT.
"""
from __future__ import annotations

import ast
import csv
import hashlib
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

# every test here reads one batch that autogrades about 40 hostile submissions (minutes)
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "course"
HOSTILE_COURSE = Path(__file__).parent / "fixtures" / "hostile_course"
CASES = Path(__file__).parent / "fixtures" / "hostile"
MEMORY_MB = 1536  # the guarded assignment's kernel memory limit (its manifest)
CELL_TIMEOUT = 20
PWNED = "PWNED"
TOKEN = "hf_" + "Instructorsecret0123456789abcdefXYZ"
HIDDEN_LINES = ("observe(\"halves\"", "nb.triple, [-1.0]", "add(0.5, 0.25)", "Because it is.",
                "return a + b", "return 2.0 * np.asarray", "return 3.0 * np.asarray", "nb.add, 0.5, 0.25",
                "def probe(nb, observe)")


def read_case(path: Path) -> dict:
    """A hostile submission's file: its settings and the answer cells it replaces."""
    from autograder.variants import read_header

    description, settings, cells = read_header(path.read_text(), str(path))
    return {"description": description, "cells": cells, **settings}


def distinctive_expected_values() -> set[str]:
    """Hashes of maxent_irl's expected values that no wrong answer, input or public number would equal."""
    data = json.loads((REPO / "solutions" / "maxent_irl" / "tests" / "expected.json").read_text())
    found = set()

    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, float) and abs(node * 840 - round(node * 840)) > 1e-6:  # not a simple fraction
            found.add(hashlib.sha256(node.hex().encode()).hexdigest()[:16])

    walk(data["tests"])
    return found


def _zip_bomb(path: Path, megabytes: int = 300) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as handle:
        with handle.open("zeros.bin", "w") as member:
            block = b"\0" * 2**20
            for _ in range(megabytes):
                member.write(block)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from autograder.authoring.course import fill_release, generate
    from autograder.grading.batch import Request, autograde
    from autograder.intake.lms import collect
    from autograder.isolation.host_isolation import probe
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
    shutil.copytree(HOSTILE_COURSE / "solutions" / "guarded", course / "solutions" / "guarded")
    assignments = load_assignments(course) + load_assignments(REPO, ["maxent_irl"])
    generate([a for a in assignments if a.id == "guarded"], course / "notebooks")
    by_id = {a.id: a for a in assignments}
    subs = root / "subs"
    beside = root / "beside"  # a folder next to SUBMISSIONS and OUT: nothing may touch it
    beside.mkdir()
    (beside / "keep.txt").write_text("untouched")
    isolated = probe().isolated
    fill_in = {"MEMORY_MB": str(MEMORY_MB), "SECRET_HASHES": repr(distinctive_expected_values()),
               "TOKEN_PATHS": repr([str(hf_home / "token"), str(Path.home() / ".cache" / "huggingface" / "token")])}

    def release_of(assignment):
        if assignment == "maxent_irl":
            return REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
        return course / "notebooks" / assignment / f"{assignment}.ipynb"

    def submit(student, assignment, patches=None, replace=None, adapter=True, blank=False, folder=None, **adapter_kw):
        folder = folder or subs / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        if blank:
            shutil.copy(release_of(assignment), folder / f"{assignment}.ipynb")
        else:
            fill_release(release_of(assignment), by_id[assignment].source, folder / f"{assignment}.ipynb",
                         patches=patches, replace=replace)
        if assignment == "guarded" and adapter:
            _adapter(folder, **adapter_kw)
        return folder / f"{assignment}.ipynb"

    def fill(text):
        for key, value in fill_in.items():
            text = text.replace(key, value)
        return text

    expected = {}
    for path in sorted(CASES.glob("*.py")):  # the attacks, one file each
        case = read_case(path)
        if case.get("NEEDS_ISOLATION") and not isolated and path.stem == "h_escape":
            continue  # never without isolation: it kills every process it can see and writes everywhere
        patches = [{"grade_id": g, "old": old, "new": fill(new)} for g, old, new in case.get("PATCHES", [])]
        submit(path.stem, case["ASSIGNMENT"], patches=patches, replace={g: fill(c) for g, c in case["cells"].items()})
        expected[path.stem] = (case["ASSIGNMENT"], case["SCORE"], case["STATUS"], case.get("FEEDBACK"))

    submit("adapter_missing", "guarded", adapter=False)
    submit("adapter_corrupt", "guarded", config_text="{ not json")
    submit("adapter_wrong_base", "guarded", base="Qwen/Qwen2.5-7B")
    pasted = submit("h_pasted", "toy_add")  # the answers pasted into a fresh notebook: no nbgrader metadata
    answers = [c for c in nbformat.read(pasted, as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("grade_id") in ("add", "q_why")]
    fresh = new_notebook(cells=[new_markdown_cell("my homework")] + [
        (new_code_cell if c.cell_type == "code" else new_markdown_cell)(c.source) for c in answers])
    nbformat.write(fresh, pasted)
    fifo = submit("h_fifo", "toy_add").parent
    os.mkfifo(fifo / "data.pipe")

    mangled = submit("cells_mangled", "toy_add", [{"grade_id": "add", "old": "return a + b",
                                                   "new": "return a - b  # first copy, wrong"}])
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

    edited = submit("test_edited", "toy_add", [{"grade_id": "add", "old": "return a + b", "new": "return a - b"}])
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
    expected.update(BUILT_HERE)
    expected[zoe["Zoë Müller"]] = ("toy_add", 2, "ok", None)
    expected[zoe["Zoé Müller"]] = ("toy_add", 0, "failed-tests", None)

    out = root / "out"
    lines = []
    started = time.perf_counter()
    try:
        results = autograde(subs, out, assignments, Request(workers=2, profile="tiny"), log=lines.append)
    finally:
        for key, value in saved_env.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    seconds = time.perf_counter() - started
    return {"results": {r.student: r for r in results}, "out": out, "subs": subs, "root": root, "beside": beside,
            "expected": expected, "reports": (report_a, report_b, report_c), "zoe": zoe, "log": lines,
            "seconds": seconds, "isolation": probe(), "assignments": assignments, "hf_home": hf_home}


# folder -> (assignment, expected score, expected status, a phrase the feedback must contain), for the
# submissions built in the fixture above rather than from a file of tests/fixtures/hostile
BUILT_HERE = {
    "cells_mangled": ("toy_add", 2, "ok", "appears more than once"),
    "test_edited": ("toy_add", 0, "failed-tests", "test cell test_add was edited"),
    "not_json": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "not_notebook": ("toy_add", 0, "invalid", "not a valid Jupyter notebook"),
    "adapter_missing": ("guarded", 5, "failed-tests", "artifact artifacts/adapter is missing"),
    "adapter_corrupt": ("guarded", 5, "failed-tests", "refused and not used: adapter_config.json cannot be read"),
    "adapter_wrong_base": ("guarded", 5, "failed-tests", "trained on another base model"),
    "h_pasted": ("toy_add", 2, "ok", "matched by its content"),
    "h_fifo": ("toy_add", 2, "ok", "a FIFO"),
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
CORRECT = ["zz_ref_guarded", "zz_ref_toy", "zz_ref_irl", "h_escape", "h_history", "huge_output", "unnamed",
           "latecomer", "bomber", "fifo_person", "packer", "h_pasted", "h_fifo", "h_token"]


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
    secrets = ("nb.double, np.arange(4)", "nb.triple, [-1.0]", "BEGIN HIDDEN TESTS", "hidden_test(", "observe(",
               "assert np.allclose(double", "torch.allclose(torch.as_tensor(triple", "autograder.kernel.probe")
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

    from autograder.isolation.host_isolation import uid_block

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
                if info["uids"] is not None and info["uids"].real in uid_block() \
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
    expected_top = {"feedback", "logs", "submitted", "autograded", "source", "release", "hidden_tests",
                    "gradebook.db", "nbgrader_config.py", "grades.csv", "lms_grades.csv", "lms.json",
                    ".feedback-bodies"}
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


def test_stopped_kernels_keep_earlier_points_and_outputs_are_capped(hostile):
    results = hostile["results"]
    for student in ("infinite_loop", "os_exit", "killed_kernel"):
        cells = results[student].cells
        assert cells["test_double"] == [2.0, 2.0] and cells["test_adapter"][0] == 0, (student, cells)
    page = (hostile["out"] / "feedback" / "huge_output" / "guarded" / "guarded.html").read_text()
    assert "output truncated" in page


def test_a_meddled_report_costs_its_own_cell_with_one_line_each(hostile):
    """Sent twice, too large, not JSON, missing: 0 for that cell and a line saying so; the rest is graded."""
    result = hostile["results"]["h_bad_reports"]
    assert result.cells["test_adapter"] == [1.0, 1.0]
    assert [result.cells[c][0] for c in ("test_double", "test_triple", "test_sort3", "test_affine")] == [0] * 4
    lines = "\n".join(result.feedback)
    for cell, why in (("test_double", "sent more than once"), ("test_triple", "too large"),
                      ("test_sort3", "could not be read"), ("test_affine", "none arrived")):
        assert any(line.startswith(f"{cell}:") and why in line for line in result.feedback), (cell, lines)


def test_no_expected_value_is_reachable_from_a_kernel(hostile):
    """During every check, a submission searched every object, frame and module of its kernel for the
    hidden tests' distinctive expected values (it was given their hashes) and the grader's own words."""
    notebook = nbformat.read(hostile["out"] / "autograded" / "h_leak_scan" / "maxent_irl" / "maxent_irl.ipynb",
                             as_version=4)
    scans = [line for c in notebook.cells for o in c.get("outputs", []) for line in o.get("text", "").splitlines()
             if line.startswith("leak scan")]
    assert len({line.split(":")[0] for line in scans}) >= 9, scans  # every function, in every test cell that calls it
    assert len(distinctive_expected_values()) > 50
    for line in scans:
        assert " 0 hits [], words []" in line, line
        assert int(line.split(": ", 1)[1].split(" values")[0]) > 10_000, line  # it did look


def test_rerun_updates_the_gradebook_instead_of_duplicating(hostile, tmp_path):
    from nbgrader.api import Gradebook

    from autograder.authoring.course import fill_release
    from autograder.grading.batch import Request, autograde

    out, subs, assignments = hostile["out"], hostile["subs"], hostile["assignments"]
    again = tmp_path / "again"
    shutil.copytree(subs / "test_edited", again / "test_edited")
    course = hostile["root"] / "course"
    fill_release(course / "notebooks" / "toy_add" / "toy_add.ipynb", course / "solutions" / "toy_add" / "toy_add.ipynb",
                 again / "test_edited" / "toy_add" / "toy_add.ipynb")
    rerun = autograde(again, out, assignments, Request(workers=1, profile="tiny"))
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


def test_a_written_answers_markup_never_runs_on_its_feedback_page(hostile):
    """h_written_markup: TeX that would carry javascript: into MathML, raw script, an onerror image and a
    javascript: link: the page keeps none of them live, and its formulas are MathML."""
    from html.parser import HTMLParser

    live = []

    class Live(HTMLParser):
        script = False

        def handle_starttag(self, tag, attrs):
            self.script = tag == "script"
            for name, value in attrs:
                value = value or ""
                if (name.startswith("on") and "PWNED" in value) or \
                        (name in ("href", "src", "xlink:href", "style") and "javascript:" in value.lower()):
                    live.append((tag, name, value))

        def handle_data(self, data):
            if self.script and "PWNED" in data:
                live.append(("script", "", data))

    page = (hostile["out"] / "feedback" / "h_written_markup" / "toy_add" / "toy_add.html").read_text()
    Live().feed(page)
    assert not live, live
    assert page.count("<math") >= 1 and "Because addition is" in page
