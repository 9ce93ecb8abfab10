"""grpo_format's held-out adherence, measured by the grader outside the student's kernel.

A fixture assignment with grpo_format's three tier cells (their hidden part calls grpo_format's own
hidden test file, judged in the grader from the grader's measurement) and real LoRA adapters on
the tiny model: the tiers follow the grader's measurement whatever the kernel prints or sets; one
evaluator process serves the whole batch, hostile adapters included, and measures a correct
adapter graded after them exactly as a fresh evaluator does; refused adapters get a line, never a
crash.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

TIERS = {"test_adherence_50": 0.5, "test_adherence_70": 0.7, "test_adherence_90": 0.9}
TIER_CELL = (
    "print('the grader measures held-out adherence')\n"
    "### BEGIN HIDDEN TESTS\n"
    "from autograder.kernel.probe import hidden_test\n"
    "hidden_test('format_tiers', 'test_adherence', '{grade_id}')\n"
    "### END HIDDEN TESTS")
REPO = Path(__file__).resolve().parents[1]
RULES = {"max_rank": 64, "target_modules": ["q_proj", "v_proj"], "max_mb": 64}


def _meta(grade_id, **flags):
    return {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": True, "schema_version": 3,
                         "solution": False, "task": False, **flags}}


def _course(root: Path) -> Path:
    from manifest_fixtures import write_manifest

    cells = [new_markdown_cell("# Format tiers", metadata=_meta("intro")),
             new_code_cell("import json, os", metadata=_meta("setup"))]
    cells += [new_code_cell(TIER_CELL.format(grade_id=g), metadata=_meta(g, grade=True, points=2)) for g in TIERS]
    folder = root / "solutions" / "format_tiers"
    (folder / "tests").mkdir(parents=True)
    shutil.copy(REPO / "solutions" / "grpo_format" / "tests" / "test_adherence.py", folder / "tests")
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}),
                   folder / "format_tiers.ipynb")
    write_manifest(folder, limits={"cell_timeout_s": 60}, artifacts=["artifacts/grpo_format_adapter"],
                   uses_tiny_model=True, adapters=RULES,
                   evaluator={"name": "grpo_format", "artifact": "artifacts/grpo_format_adapter",
                              "tiers": {"tiny": TIERS, "full": TIERS}, "timeout_s": 120, "memory_mb": 12288})
    return root


def _save_adapter(folder: Path, noise: float = 0.0, seed: int = 0, **manifest) -> Path:
    import torch

    from helpers import lm

    torch.manual_seed(seed)  # lora_A's initial values too: the adapter must not depend on which tests ran before
    model = lm.load_policy("tiny", "Qwen/Qwen2.5-0.5B-Instruct", lora=dict(r=4, alpha=8, dropout=0.0))[0]
    if noise:
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0.0, noise)
    path = folder / "artifacts" / "grpo_format_adapter"
    lm.save_adapter(model, path, profile="tiny", steps=0)
    if manifest:
        data = json.loads((path / "course_kit_adapter.json").read_text())
        data.update(manifest)
        (path / "course_kit_adapter.json").write_text(json.dumps(data))
    return path


def _edit_config(adapter: Path, **changes) -> None:
    config = json.loads((adapter / "adapter_config.json").read_text())
    config.update(changes)
    (adapter / "adapter_config.json").write_text(json.dumps(config))


def _break_second_tensor(adapter: Path) -> None:
    """A file whose later tensors do not fit the model: peft fails halfway through attaching it."""
    from safetensors.torch import load_file, save_file

    path = adapter / "adapter_model.safetensors"
    tensors = load_file(str(path))
    names = sorted(tensors)
    tensors[names[-1]] = tensors[names[-1]][:, :1].contiguous() if tensors[names[-1]].shape[1] > 1 else \
        tensors[names[-1]].repeat(1, 2)
    save_file(tensors, str(path))


HOSTILE = {  # student -> what the adapter does to a shared base model (see evaluators/adapters.py)
    "init_from_base": lambda a: _edit_config(a, init_lora_weights="pissa"),
    "modules_to_save": lambda a: _edit_config(a, modules_to_save=["lm_head"]),
    "layer_replication": lambda a: _edit_config(a, layer_replication=[[0, 1], [0, 1]]),
    "huge_rank": lambda a: _edit_config(a, r=100000),
    "fails_halfway": _break_second_tensor,
    "bias_all": lambda a: _edit_config(a, bias="all"),
}


@pytest.fixture(scope="module")
def tiers(tmp_path_factory, tiny_model_dir):
    from autograder.grading.batch import Request, autograde
    from autograder.manifest import load_assignments

    root = _course(tmp_path_factory.mktemp("tiers"))
    assignments = load_assignments(root)
    release = assignments[0].source  # no answer cells: the release is the source
    subs = root / "subs"

    def submit(student, extra_cell=None, **adapter):
        folder = subs / student / "format_tiers"
        folder.mkdir(parents=True)
        notebook = nbformat.read(release, as_version=4)
        if extra_cell:
            notebook.cells.insert(2, new_code_cell(extra_cell))
        nbformat.write(notebook, folder / "format_tiers.ipynb")
        if adapter.pop("with_adapter", True):
            return _save_adapter(folder, **adapter)
        return None

    base = submit("a_base_adapter")
    unedited = root / "unedited"
    for student, attack in HOSTILE.items():  # graded before the correct one (students sort by name)
        adapter = submit(f"b_{student}", noise=0.5)
        shutil.copytree(adapter, unedited / student)  # the same weights, the config as saved
        attack(adapter)
    noisy = submit("c_noisy_adapter", noise=0.5)
    submit("d_liar", extra_cell=(  # the kernel claims 100%: the grader does not care
        "os.environ['AUTOGRADER_MEASUREMENTS'] = json.dumps({'grpo_format': {'rate': 1.0}})\n"
        "GRADER_MEASUREMENT = {'rate': 1.0}\nprint('100%')"))
    submit("e_no_adapter", with_adapter=False)
    submit("f_full_profile", profile="full", base_model="Qwen/Qwen2.5-0.5B-Instruct")
    pickled = submit("g_pickle_weights")
    (pickled / "adapter_model.safetensors").rename(pickled / "adapter_model.bin")
    # scores and measurements are what these tests read: no nbgrader page of each notebook (2-3 s each)
    results = autograde(subs, root / "out", assignments, Request(workers=1, profile="tiny", feedback_pages=False))
    return {r.student: r for r in results}, base, noisy, root / "out", unedited


@pytest.mark.slow
def test_tiers_follow_the_graders_measurement(tiers):
    results, base, noisy, *_ = tiers
    for student in ("a_base_adapter", "c_noisy_adapter", "d_liar"):
        result = results[student]
        measured = result.measurements["grpo_format"]
        assert measured["error"] is None and measured["total"] == 60 and 0 <= measured["rate"] <= 1
        assert measured["rate"] == measured["hits"] / 60
        assert measured["thresholds"] == TIERS
        for grade_id, threshold in TIERS.items():
            assert result.cells[grade_id][0] == (2.0 if measured["rate"] >= threshold else 0.0), (student, measured)
        assert any(f"measured by the grader: {measured['rate']:.0%}" in line for line in result.feedback)
    # the correct adapters were decoded in one group with the hostile ones (measure_ahead)
    assert results["c_noisy_adapter"].measurements["grpo_format"].get("group", 1) > 1
    # the liar's kernel printed 100% and set every name it could: its score is its adapter's
    assert results["d_liar"].measurements["grpo_format"]["rate"] == \
        results["a_base_adapter"].measurements["grpo_format"]["rate"]
    assert results["d_liar"].score == results["a_base_adapter"].score


@pytest.mark.slow
def test_the_tier_cells_print_the_graders_own_measurement(tiers):
    results, _, _, out, _ = tiers
    notebook = nbformat.read(out / "autograded" / "d_liar" / "format_tiers" / "format_tiers.ipynb", as_version=4)
    rate = results["d_liar"].measurements["grpo_format"]["rate"]
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in TIERS:
            printed = "".join(o.get("text", "") for o in cell.outputs)
            assert f"held-out format adherence: {rate:.0%}" in printed and "100%" not in printed, printed


@pytest.mark.slow
def test_hostile_adapters_cannot_change_what_the_next_submission_is_measured_against(tiers):
    from autograder.evaluators.grpo_format import Evaluator
    from autograder.manifest import AdapterRules

    results, _, noisy, _, unedited = tiers
    rules = AdapterRules(**{**RULES, "target_modules": tuple(RULES["target_modules"])})
    fresh = Evaluator("tiny")
    # a fresh evaluator measures the noisy adapter, graded after every attack, as the batch's did
    assert fresh.measure(noisy, rules)["rate"] == results["c_noisy_adapter"].measurements["grpo_format"]["rate"]
    for student in HOSTILE:
        result = results[f"b_{student}"]
        assert result.status in ("ok", "failed-tests"), (student, result.status, result.feedback)
    refused = {s: results[f"b_{s}"] for s in ("modules_to_save", "layer_replication", "huge_rank", "bias_all")}
    for student, result in refused.items():
        assert [result.cells[g][0] for g in TIERS] == [0, 0, 0], student
        assert any("was refused and not used" in line for line in result.feedback), (student, result.feedback)
    # init_lora_weights is ignored (the weights come from the file): it measures like its weights
    assert results["b_init_from_base"].measurements["grpo_format"]["rate"] == \
        fresh.measure(unedited / "init_from_base", rules)["rate"]
    halfway = results["b_fails_halfway"].measurements["grpo_format"]
    assert halfway["rate"] is None and "could not be loaded" in halfway["error"]


def test_a_base_changed_in_place_is_reloaded(tiny_model_dir):
    import torch

    from autograder.evaluators.shared_base import SharedBase
    from helpers import lm

    shared = SharedBase(lambda: lm.load_model(str(tiny_model_dir)))
    assert shared.release() is False  # nothing changed: kept
    with torch.no_grad():
        next(shared.model.parameters()).view(-1)[0] += 1e-3  # what an init computed from the base does
    assert shared.release() is True and shared.reloads == 1
    fresh = lm.load_model(str(tiny_model_dir))
    assert all(torch.equal(a, b) for a, b in zip(shared.model.parameters(), fresh.parameters(), strict=True))


@pytest.fixture(scope="module")
def group(tmp_path_factory, tiny_model_dir):
    """Adapters with different adherence, one that fails halfway through loading, one refused, one of
    another base model; and the evaluator that measures them."""
    import torch

    from autograder.evaluators.grpo_format import Evaluator

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # in this process, beside the other suite: two threads on two busy cores crawl
    root = tmp_path_factory.mktemp("group")
    # three different rates on the tiny model (18.3 %, 13.3 %, 10.0 %), each adapter seeded whole
    adapters = [_save_adapter(root / f"noisy{i}", noise=noise, seed=seed)
                for i, (noise, seed) in enumerate(((0.0, 0), (0.1, 2), (0.2, 2)))]
    broken = _save_adapter(root / "broken", noise=0.05, seed=7)
    _break_second_tensor(broken)
    refused = _save_adapter(root / "refused")
    _edit_config(refused, r=100000)
    other = _save_adapter(root / "other", profile="full", base_model="Qwen/Qwen2.5-0.5B-Instruct")
    yield Evaluator("tiny"), [adapters[0], broken, adapters[1], refused, other, adapters[2]]
    torch.set_num_threads(threads)


def test_adapters_decoded_together_measure_as_each_alone(group):
    """peft's mixed-adapter batch: each row through its own adapter, so a group's rates are each
    adapter's own; a failed load or a refusal is that adapter's answer only; the base is intact."""
    evaluator, adapters = group
    together = evaluator.measure_many(adapters)
    assert evaluator.shared.reloads == 0 and not any(a["base_reloaded"] for a in together)
    alone = [evaluator.measure(adapter) for adapter in adapters]
    assert [a["rate"] for a in together] == [a["rate"] for a in alone]
    assert len({a["rate"] for a in together if a["rate"] is not None}) == 3, together  # three different adapters
    assert [a["error"] is None for a in together] == [True, False, True, False, False, True]
    assert "could not be loaded" in together[1]["error"] and "refused" in together[3]["error"]
    assert "not on this profile's base model" in together[4]["error"]


def test_a_first_adapter_that_fails_fails_alone_and_padding_changes_no_rate(group, monkeypatch):
    """The first adapter failing halfway costs its own answer only; a decode padded to a full group's
    rows (what a GPU does, rows without an adapter in the free slots) gives the same rates."""
    evaluator, adapters = group
    alone = evaluator.measure(adapters[0])["rate"]
    first_broken = evaluator.measure_many([adapters[1], adapters[0]])
    assert "could not be loaded" in first_broken[0]["error"] and first_broken[1]["rate"] == alone is not None
    monkeypatch.setattr(evaluator, "slots", 8)
    assert [a["rate"] for a in evaluator.measure_many([adapters[0], adapters[2]])] == \
        [alone, evaluator.measure(adapters[2])["rate"]]


def test_a_group_after_which_the_base_changed_answers_nothing(group, monkeypatch):
    """A base found changed after the group: no rate for anyone, so each adapter is measured alone."""
    evaluator, adapters = group
    release = evaluator.shared.release  # still detach the adapters, or the next test's evaluator keeps them
    monkeypatch.setattr(evaluator.shared, "release", lambda policy=None: release(policy) or True)
    changed = evaluator.measure_many([adapters[0], adapters[2]])
    assert all(a["rate"] is None and "base model changed" in a["error"] for a in changed)


@pytest.mark.slow
def test_a_ray_task_measures_a_group_for_the_grading_tasks(tiers, monkeypatch):
    """On Ray a group is measured in its own task (``measure_task``); a grading task's pool that learnt
    its answers measures nothing again and gives the batch's own rates."""
    from types import SimpleNamespace

    from autograder.evaluators import declared
    from autograder.evaluators.pool import Pool
    from autograder.grading import submission
    from autograder.grading.ray_runner import measure_task, pack
    from autograder.manifest import load_assignments

    results, _, _, out, _ = tiers
    (assignment,) = load_assignments(out.parent)
    settings = SimpleNamespace(profile="tiny", sandbox="auto")
    students = ("a_base_adapter", "c_noisy_adapter")
    folders = {s: out.parent / "subs" / s / "format_tiers" for s in students}
    try:
        known = measure_task(assignment, [(s, pack(folders[s])) for s in students], settings)
    finally:  # the task's pool is this process's default one: its evaluator must not outlive the test
        for started in submission._pool:
            started.close()
        submission._pool.clear()
    pool = Pool()
    pool.learn(known)
    monkeypatch.setattr(Pool, "_run", lambda *args, **kwargs: pytest.fail("measured again"))
    for student in students:
        measured = pool.measure(declared(assignment, "tiny"), folders[student], settings, None)["grpo_format"]
        assert measured["rate"] == results[student].measurements["grpo_format"]["rate"] is not None
    pool.close()


@pytest.mark.slow
def test_unusable_adapters_get_a_line_not_a_crash(tiers):
    results, *_ = tiers
    missing = results["e_no_adapter"]
    assert [missing.cells[g][0] for g in TIERS] == [0, 0, 0]
    assert any("could not be measured" in line for line in missing.feedback)
    wrong = results["f_full_profile"]
    assert wrong.status == "wrong-profile" and [wrong.cells[g][0] for g in TIERS] == [0, 0, 0]
    assert any("trained in the full profile" in line and "graded in the tiny profile" in line
               for line in wrong.feedback)
    pickled = results["g_pickle_weights"]
    assert any("adapter_model.bin is not accepted" in line for line in pickled.feedback), pickled.feedback
    assert [pickled.cells[g][0] for g in TIERS] == [0, 0, 0]


def test_apply_tiers_thresholds():
    from autograder.evaluators import apply_tiers
    from autograder.outcome import Result

    spec = {"name": "grpo_format", "tiers": TIERS, "profile": "tiny"}
    for rate, earned in ((0.72, [2, 2, 0]), (0.5, [2, 0, 0]), (0.9, [2, 2, 2]), (0.49, [0, 0, 0])):
        result = Result("s", "grpo_format", cells={g: [2.0, 2.0] for g in TIERS},
                        measurements={"grpo_format": {"rate": rate, "hits": 0, "total": 60, "error": None}})
        record = {"grades": {}}
        apply_tiers(result, spec, record)
        assert [result.cells[g][0] for g in TIERS] == earned
        assert [record["grades"][f"grpo_format/{g}"]["auto_score"] for g in TIERS] == earned
    assert "below the 90% tier (tiny profile)" in result.cell_messages["test_adherence_90"]


def test_grpo_format_declares_tiers_for_every_profile():
    from autograder.evaluators import declared
    from autograder.manifest import load_assignments

    repo = Path(__file__).resolve().parents[1]
    (assignment,) = load_assignments(repo, ["grpo_format"])
    assert declared(assignment, "full")["tiers"] == TIERS  # the handout's tiers
    tiny = declared(assignment, "tiny")["tiers"]
    assert set(tiny) == set(TIERS) and all(tiny[g] <= TIERS[g] for g in TIERS)


class _Counting:
    """An evaluator process that records what it measured: an artifact with a ``fail`` file fails."""

    def __init__(self, runs: list):
        self.runs = runs

    def measure(self, artifact: Path, rules, timeout: float, inputs: dict | None = None) -> dict:
        self.runs.append(artifact)
        return {"error": "slow"} if (artifact / "fail").exists() else {"rate": 0.5 + 0.1 * len(self.runs)}

    def measure_many(self, artifacts: list[Path], rules, timeout: float) -> list[dict]:
        return [self.measure(artifact, rules, timeout) for artifact in artifacts]


def test_adapters_measured_ahead_are_not_measured_again(tmp_path, monkeypatch):
    """What a group measured without an error is each submission's answer; the same bytes are measured
    once; an error is not kept, so that artifact is measured alone with its submission."""
    from types import SimpleNamespace

    from autograder.evaluators.pool import Pool

    runs = []
    monkeypatch.setattr(Pool, "_run", lambda self, spec, settings, gpu, ask, attempts=2: dict(ask(_Counting(runs))))
    spec = {"name": "grpo_format", "artifact": "adapter", "timeout": 5}
    settings = SimpleNamespace(profile="tiny", sandbox="off")
    for name, data in (("a", b"one"), ("b", b"one"), ("c", b"two"), ("d", b"three")):
        (tmp_path / name / "adapter").mkdir(parents=True)
        (tmp_path / name / "adapter" / "weights.bin").write_bytes(data)
    (tmp_path / "d" / "adapter" / "fail").write_bytes(b"")
    pool = Pool(tmp_path / "scratch")
    kept = pool.measure_ahead(spec, [tmp_path / n / "adapter" for n in "abcd"], settings, None)
    assert kept == 3 and len(runs) == 3  # a and b are the same bytes: measured once, both answered
    answers = {n: pool.measure(spec, tmp_path / n, settings, None)["grpo_format"] for n in "abc"}
    assert len(runs) == 3 and answers["a"]["rate"] == answers["b"]["rate"] != answers["c"]["rate"]
    assert "seconds_in_group" in answers["a"]
    pool.measure(spec, tmp_path / "d", settings, None)
    assert len(runs) == 4


def test_nothing_is_measured_ahead_for_submissions_graded_no_gpu(tmp_path):
    """grpo_format needs a GPU in the full profile: without one its submissions are graded no-gpu,
    so no group is measured (on a CPU that would run the real model for nothing)."""
    from types import SimpleNamespace

    from autograder.grading.measure_ahead import job_groups, measure_ahead
    from autograder.manifest import load_assignments

    (assignment,) = load_assignments(REPO, ["grpo_format"])
    jobs = [(f"s{i}", "grpo_format", tmp_path / f"s{i}") for i in range(10)]
    assert [len(group) for _, group in job_groups(jobs, {"grpo_format": assignment}, "full")] == [8, 2]
    pool = SimpleNamespace(measure_ahead=lambda *args: pytest.fail("measured without a GPU"))
    runner = SimpleNamespace(settings=SimpleNamespace(profile="full", gpus=0), by_id={"grpo_format": assignment},
                             pool=pool)
    assert assignment.gpu_needed("full") and measure_ahead(runner, jobs, workers=2) == 0


def test_the_same_artifact_bytes_are_measured_once_per_batch(tmp_path, monkeypatch):
    """A re-upload or a copy of an adapter already measured in this batch gets the same answer
    without a second run; changed bytes, another setting or an error answer run again."""
    from types import SimpleNamespace

    from autograder.evaluators.pool import Pool

    runs = []
    monkeypatch.setattr(Pool, "_run", lambda self, spec, settings, gpu, ask, attempts=2: dict(ask(_Counting(runs))))
    spec = {"name": "grpo_format", "artifact": "adapter", "timeout": 5}
    settings = SimpleNamespace(profile="tiny", sandbox="off")
    for name in ("a", "b", "c"):
        (tmp_path / name / "adapter").mkdir(parents=True)
        (tmp_path / name / "adapter" / "weights.bin").write_bytes(b"same")
    (tmp_path / "c" / "adapter" / "weights.bin").write_bytes(b"other")
    pool = Pool(tmp_path / "scratch")
    first = pool.measure(spec, tmp_path / "a", settings, None)["grpo_format"]
    again = pool.measure(spec, tmp_path / "b", settings, None)["grpo_format"]
    assert len(runs) == 1 and again["rate"] == first["rate"]
    assert pool.measure(spec, tmp_path / "c", settings, None)["grpo_format"]["rate"] != first["rate"]
    assert pool.measure({**spec, "timeout": 6}, tmp_path / "a", settings, None) and len(runs) == 3
    (tmp_path / "a" / "adapter" / "fail").write_bytes(b"")
    pool.measure(spec, tmp_path / "a", settings, None)
    pool.measure(spec, tmp_path / "a", settings, None)
    assert len(runs) == 5  # errors are not kept


def test_an_evaluator_worker_sees_every_module_it_imports(tmp_path):
    """The worker's sandbox shows only WORKER_PARTS of autograder/: a new import of manifest.py (points.py)
    once made every measurement fail with ImportError, caught only by a slow test."""
    import shutil
    import subprocess
    import sys

    from autograder.evaluators.pool import WORKER_PARTS
    from autograder.manifest import REPO_ROOT

    package = tmp_path / "autograder"
    package.mkdir()
    shutil.copy(REPO_ROOT / "autograder" / "__init__.py", package)
    for part in WORKER_PARTS:
        source = REPO_ROOT / "autograder" / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, package / part)
    # the editable install's finder would fetch a missing module from the repository: take it out, and let the
    # repository serve `helpers` only (autograder's submodules come from its package folder, the copy)
    code = ("import sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in str(f).lower()]; "
            "sys.path.insert(0, sys.argv[1]); sys.path.append(sys.argv[2]); "
            "import autograder.evaluators.worker, autograder.manifest, autograder.evaluators.grpo_format, "
            "autograder.evaluators.greedy_answers; assert autograder.manifest.__file__.startswith(sys.argv[1])")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(REPO_ROOT)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
