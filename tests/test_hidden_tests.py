"""Hidden tests as files: what reaches the kernel, how a report is read and judged, the kit's own files."""
from __future__ import annotations

import ast
import json
import re

import nbformat
import numpy as np
import pytest
import torch

from autograder.grading import hidden_tests
from autograder.grading.executor import as_text, take_report, verdict_outputs
from autograder.kernel.probe import FAILED, MIME, Notebook, Observe, observe_probe
from autograder.manifest import REPO_ROOT, load_assignments

ASSIGNMENTS = load_assignments(REPO_ROOT)
TEST_FILE = '''"""Doubles numbers."""
import numpy as np
from _shared import inputs

from autograder.compare import difference

TODO = "TODO 1 (double)"
TOLERANCE = 1e-3


def scale(x):
    return np.asarray(x) * 1.0


def probe(nb, observe):
    observe("small", nb.double, scale(inputs()))
    observe("raises", nb.double, "x")


HINTS = {"small": "multiply by 2"}


def judge(check):
    check.same("small")
    check.expect(difference(check.raw("raises"), check.expected["raises"]) is None, "must raise")
'''
SHARED = '''"""Inputs shared by several tests."""
import numpy as np

SECRET = "only the grader"


def inputs():
    return np.arange(3.0)


def unused():
    return SECRET
'''


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "test_double.py").write_text(TEST_FILE)
    (tmp_path / "_shared.py").write_text(SHARED)
    return tmp_path


def test_the_kernel_gets_the_probe_and_what_it_uses_only(folder):
    source = hidden_tests.load(folder)["test_double"].kernel_source
    tree = ast.parse(source)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert names == {"probe", "scale", "inputs"}  # inputs() inlined from _shared.py
    for absent in ("judge", "HINTS", "TOLERANCE", "difference", "autograder", "SECRET", "unused", "TODO"):
        assert absent not in source, absent
    assert "import numpy as np" in source


def test_a_probe_reports_values_and_errors_per_label(folder):
    def double(x):
        return 2 * np.asarray(x, dtype=float)

    report = observe_probe("test_double", hidden_tests.load(folder)["test_double"].kernel_source, {"double": double})
    assert report["error"] is None
    assert report["observations"]["small"] == {"type": "array", "library": "numpy", "dtype": "float64",
                                               "shape": [3], "values": [0.0, 2.0, 4.0]}
    assert report["observations"]["raises"]["type"] == "error"


def test_a_missing_function_stops_the_probe_with_one_line(folder):
    report = observe_probe("test_double", hidden_tests.load(folder)["test_double"].kernel_source, {})
    assert report["error"]["error"] == "NameError" and "defines no `double`" in report["error"]["message"]
    test = hidden_tests.load(folder)["test_double"]
    verdict = hidden_tests.judge(test, report, {"small": {}, "raises": {}}, "test_double")
    assert verdict.score == 0 and verdict.failures == [
        "TODO 1 (double), the checks stopped early: raised NameError: the notebook defines no `double`: run the "
        "cell that defines it and keep its name as given"]


def test_judge_uses_the_files_rules_and_hints(folder):
    test = hidden_tests.load(folder)["test_double"]
    expected = {"small": Observe().plain(np.arange(3.0) * 2), "raises": {"type": "error", "error": "TypeError"}}
    right = {"observations": {"small": Observe().plain(np.arange(3.0) * 2), "raises": {"type": "error"}}}
    assert hidden_tests.judge(test, right, expected, "test_double").score == 1.0
    wrong = {"observations": {"small": Observe().plain(np.arange(3.0)), "raises": Observe().plain(0.0)}}
    verdict = hidden_tests.judge(test, wrong, expected, "test_double")
    assert verdict.score == 0 and len(verdict.failures) == 2
    assert verdict.failures[0].endswith("What to check: multiply by 2") and "must raise" in verdict.failures[1]
    assert hidden_tests.judge(test, wrong, expected, "test_double", partial=True).score == 0.0
    half = {"observations": {"small": Observe().plain(np.arange(3.0) * 2), "raises": Observe().plain(0.0)}}
    assert hidden_tests.judge(test, half, expected, "test_double", partial=True).score == 0.5


def test_notebook_stand_ins_are_put_back():
    namespace = {"f": 1}
    nb = Notebook(namespace)
    with nb.replaced(f=2, g=3):
        assert (nb.f, nb.g) == (2, 3)
    assert namespace == {"f": 1}


def test_observe_keeps_dtypes_shapes_and_caps_what_it_reports():
    observe = Observe()
    assert observe("boom", lambda: 1 / 0) is FAILED and observe.values["boom"]["error"] == "ZeroDivisionError"
    observe.value("bf16", torch.ones(2, 2, dtype=torch.bfloat16))
    assert observe.values["bf16"]["dtype"] == "bfloat16" and observe.values["bf16"]["shape"] == [2, 2]
    observe.value("nested", {"a": [np.float32(1.5), "s", None]})
    assert observe.values["nested"]["items"]["a"]["items"][0]["dtype"] == "float32"
    observe.sketch("grad", torch.randn(10_000))
    assert observe.values["grad"]["shape"] == [17] and observe.values["grad"]["dtype"] == "float32"
    observe.value("huge", np.zeros(300_000))
    assert observe.values["huge"]["type"] == "object" and "too large" in observe.values["huge"]["class"]
    json.dumps(observe.values)


def _message(text):
    return {"output_type": "display_data", "metadata": {}, "data": {MIME: text}}


def test_a_report_that_is_missing_twice_too_large_or_unreadable_is_no_report():
    good = json.dumps({"observations": {"a": {"type": "int", "value": 1}}})
    printed = {"output_type": "stream", "name": "stdout", "text": "hello"}
    assert take_report([printed, _message(good)])[0]["observations"]["a"]["value"] == 1
    assert take_report([printed])[1] == "none arrived"
    assert take_report([_message(good), _message(good)])[1] == "it was sent more than once"
    assert take_report([_message("x" * 5_000_000)])[1] == "it was too large"
    assert take_report([_message("{not json")])[1] == "it could not be read"
    assert take_report([_message("[" * 100_000 + "]" * 100_000)])[1] == "it could not be read"
    assert take_report([_message(json.dumps({"observations": 3}))])[1] == "it could not be read"
    error = {"output_type": "error", "ename": "CellTimeoutError", "evalue": "", "traceback": []}
    assert take_report([error])[1] == "CellTimeoutError: "


def test_the_verdict_decides_the_cell_whatever_the_students_code_printed():
    from nbformat.notebooknode import from_dict
    from nbgrader.utils import determine_grade

    def cell(outputs):
        return from_dict({"cell_type": "code", "source": "", "outputs": outputs, "execution_count": 1,
                          "metadata": {"nbgrader": {"grade": True, "solution": False, "points": 4,
                                                    "grade_id": "t", "locked": True}}})

    noise = as_text([{"output_type": "error", "ename": "AssertionError", "evalue": "visible", "traceback": []},
                     {"output_type": "stream", "name": "stderr", "text": "warning"},
                     {"output_type": "execute_result", "data": {"text/plain": "'ok'"}, "metadata": {}},
                     _message("{}")])
    assert [o["output_type"] for o in noise] == ["stream", "stream", "display_data"]
    passed = hidden_tests.Verdict(1.0, [])
    failed = hidden_tests.Verdict(0.0, ["TODO 1, small: got 1, expected 2"])
    partial = hidden_tests.Verdict(0.25, ["TODO 1, small: got 1, expected 2"])
    assert determine_grade(cell(noise + verdict_outputs(passed, 4)))[0] == 4
    assert determine_grade(cell(noise + verdict_outputs(failed, 4)))[0] == 0
    assert determine_grade(cell(noise + verdict_outputs(partial, 4)))[0] == 1


# --- the kit's own hidden tests ---------------------------------------------------------------

def _graded_cells(assignment):
    notebook = nbformat.read(assignment.source, as_version=4)
    return [c for c in notebook.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata["nbgrader"].get("solution")]


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_every_graded_cell_calls_an_existing_hidden_test(assignment):
    tests = hidden_tests.load(assignment.tests_dir)
    expected = hidden_tests.read_expected(assignment.tests_dir).get("tests", {})
    for cell in _graded_cells(assignment):
        hidden = cell.source.partition("### BEGIN HIDDEN TESTS")[2]
        found = hidden_tests.HIDDEN_CALL.search(hidden)
        gid = cell.metadata["nbgrader"]["grade_id"]
        assert found and found.group("assignment") == assignment.id, f"{gid}: no hidden_test({assignment.id!r}, ...)"
        name = found.group("test")
        assert name in tests, f"{gid}: {assignment.tests_dir / name}.py is missing"
        assert tests[name].measured_by or name in expected, f"{gid}: no expected values for {name}: run generate"
        assert hidden.strip().splitlines()[-1].startswith("### END HIDDEN TESTS") or "hidden_test(" in hidden


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.id)
def test_hidden_test_files_send_the_kernel_no_judge_and_draw_from_seeded_generators(assignment):
    for name, test in hidden_tests.load(assignment.tests_dir).items():
        text = test.path.read_text()
        module = ast.parse(text)
        assert ast.get_docstring(module), f"{name}: say what it checks in a docstring"
        assert any(isinstance(n, ast.FunctionDef) and n.name == "probe" for n in module.body) or test.measured_by
        kernel = test.kernel_source
        assert "def judge" not in kernel and "HINTS" not in kernel, name
        assert not re.search(r"autograder\.(?!kernel\b)", kernel), f"{name}: the kernel has autograder.kernel only"
        assert "expected.json" not in text, name
        # randomness only from generators the test makes from a literal seed
        for call in ("np.random.rand", "np.random.randn", "np.random.seed", "random.random(", "random.randint(",
                     "torch.rand(", "torch.randn(", "torch.randint("):
            for line in text.splitlines():
                assert call not in line or "generator=" in line, f"{name}: {line.strip()}"


def test_the_hostile_suites_leak_scan_finds_a_value_that_is_there(capsys):
    """The control for test_no_expected_value_is_reachable_from_a_kernel: the same scan, run here, finds
    a value a frame holds and a grader word a string holds."""
    import hashlib

    from autograder.variants import read_header

    cells = read_header((REPO_ROOT / "tests" / "fixtures" / "hostile" / "h_leak_scan.py").read_text(), "scan")[2]
    planted = 0.1234567891234
    source = cells["feature_expectation"].replace(
        "SECRET_HASHES", repr({hashlib.sha256(planted.hex().encode()).hexdigest()[:16]}))
    namespace = {"np": np}
    exec(source, namespace)  # noqa: S102 - the fixture's own code
    held = [planted, "x = 1\nHINTS = {}"]  # noqa: F841 - what the scan must find
    namespace["_scan"]("control")
    printed = capsys.readouterr().out
    assert "1 hits [0.1234567891234]" in printed and "'HINTS = {'" in printed, printed


def test_tiny_grpo_improvement_is_judged_on_answers_the_grader_generated():
    """The kernel reports the student's task only; a report of made-up greedy answers changes nothing."""
    from autograder.kernel.probe import Observe

    test = hidden_tests.load(REPO_ROOT / "solutions" / "tiny_grpo" / "tests")["test_eval_improvement"]
    assert test.evaluated_with == "greedy_answers" and "greedy" not in test.kernel_source.replace("greedy_", "")
    prompts = [f"Sort the digits: {i % 10} {i % 7}\nSorted:" for i in range(200)]
    answers = [" ".join(sorted(p.split(": ")[1].split("\n")[0].split())) for p in prompts]
    observe = Observe()
    observe.value("200 fresh prompts (make_prompts, seed 4242)", prompts)
    observe.value("their expected answers", answers)
    observe.value("greedy answers, adapter on", answers)  # forged: the kernel says the adapter is perfect
    report = {"observations": observe.values}
    untrained = {"base": ["0 0"] * 200, "tuned": ["0 0"] * 200, "error": None}
    assert hidden_tests.judge(test, report, {}, "test_eval_improvement", measurement=untrained).score == 0
    trained = {"base": ["0 0"] * 200, "tuned": answers, "error": None}
    verdict = hidden_tests.judge(test, report, {}, "test_eval_improvement", measurement=trained)
    assert verdict.score == 1 and "generated by the grader" in verdict.notes[0]
    missing = hidden_tests.judge(test, report, {}, "test_eval_improvement", measurement=None)
    assert missing.score == 0 and "could not be measured" in missing.failures[0]


@pytest.mark.parametrize("name", ["test_feature_expectation_iterable", "test_initial_probabilities_iterable"])
def test_a_wrong_value_is_not_blamed_on_generators(name):
    """Issue 31: one wrong answer made maxent_irl's generator checks blame generator handling, which was correct."""
    from autograder.kernel.probe import Observe

    folder = REPO_ROOT / "solutions" / "maxent_irl" / "tests"
    test = hidden_tests.load(folder)[name]
    expected = hidden_tests.read_expected(folder)["tests"][name]
    right = np.asarray(hidden_tests.decode(expected[test.module.AS_LIST]))
    for values, score, says in (((2 * right, 2 * right), 0, "already wrong for a list"),
                                ((right, 2 * right), 0, "a generator has no len()"), ((right, right), 1, "")):
        observe = Observe()
        observe.value(test.module.AS_LIST, values[0])
        observe.value(test.module.AS_GENERATOR, values[1])
        verdict = hidden_tests.judge(test, {"observations": observe.values}, expected, name)
        assert verdict.score == score and says in " ".join(verdict.failures), verdict
    assert "len()" not in hidden_tests.judge(test, {"observations": {}}, expected, name).failures[0]


def test_a_malformed_array_report_is_refused_before_anything_regroups_it():
    """Issue 40: a 15 KB report whose shape disagrees with its values cannot make the grader build a huge list."""
    from autograder import compare
    from autograder.grading import hidden_tests

    forged = [{"type": "array", "values": [1.0] * 2500, "shape": [1] * 2500},
              {"type": "array", "values": [1.0], "shape": [10**9, 0, 10**9]},
              {"type": "array", "values": [1.0, 2.0], "shape": [3]},
              {"type": "array", "values": [1.0], "shape": [1.5]},
              {"type": "array", "values": [1.0], "shape": [True]}]
    for observation in forged:
        with pytest.raises(hidden_tests.Unusable, match="malformed"):
            hidden_tests.decode(observation)
        assert compare.numeric(observation) is None
    grid = {"type": "array", "values": [1, 2, 3, 4, 5, 6], "shape": [2, 3]}
    assert hidden_tests.decode(grid) == [[1, 2, 3], [4, 5, 6]]
    assert hidden_tests.decode({"type": "array", "values": [7.5], "shape": []}) == 7.5
    assert hidden_tests.decode({"type": "array", "values": [], "shape": [0, 4]}) == []


def test_a_malformed_report_is_refused_once_before_any_judge_reads_it():
    """Issue 40: types, shapes, sizes and nesting are checked in one place (``hidden_tests.validate``)."""
    def report(observation):
        return _message(json.dumps({"observations": {"a": observation}}))

    refused = {"unknown type": {"type": "tensor", "value": 1},
               "shape": {"type": "array", "values": [1.0] * 2500, "shape": [1] * 2500},
               "not numbers": {"type": "array", "values": ["x"], "shape": [1]},
               "a number as a string": {"type": "float", "value": "1.0"},
               "a list without items": {"type": "list"},
               "nesting": json.loads('{"type": "list", "items": [' * 20 + '{"type": "none"}' + ']}' * 20)}
    for why, observation in refused.items():
        found, problem, _ = take_report([report(observation)])
        assert found is None and problem.startswith("it could not be judged"), why
    many = {"type": "list", "items": [{"type": "array", "values": [0] * 400_000, "shape": [400_000]}] * 6}
    with pytest.raises(hidden_tests.Malformed, match="more than"):
        hidden_tests.validate({"observations": {"a": many}})
    fine = {"type": "list", "items": [{"type": "array", "values": [1, 2.5, None], "shape": [3]},
                                      {"type": "error", "error": "ValueError", "message": "no"}]}
    assert take_report([report(fine)])[1] is None


def test_a_judge_past_its_time_budget_fails_the_cell_and_the_grader_goes_on(tmp_path, monkeypatch):
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "test_slow.py").write_text('TODO = "slow"\n\n\ndef probe(nb, observe):\n    pass\n\n\n'
                                         'def judge(check):\n    while True:\n        pass\n')
    monkeypatch.setattr(hidden_tests, "JUDGE_SECONDS", 0.2)
    verdict = hidden_tests.judge(hidden_tests.load(folder)["test_slow"], {"observations": {}}, {}, "test_slow")
    assert verdict.score == 0 and "could not be judged (judging took more than 0.2 s)" in verdict.failures[0]


def test_nan_never_passes_a_rule_or_a_comparison():
    """Issue 40: a NaN reward is not a number a rule can accept ("scores what it claims" held for NaN)."""
    import sys

    sys.path.insert(0, str(REPO_ROOT / "solutions" / "tiny_grpo" / "tests"))
    try:
        from _rules import numbers
    finally:
        sys.path.pop(0)
    assert numbers([0.5, float("nan")]) is None and numbers([float("inf")]) is None and numbers([1, 0.5]) == [1.0, 0.5]
    from autograder.compare import difference

    assert difference({"type": "float", "value": float("nan")}, {"type": "float", "value": 1.0}) is not None


def test_shared_files_of_two_assignments_never_mix_under_a_relative_course_root(monkeypatch):
    """maxent_irl and math_grpo both have a `_stand_ins.py`; with `--course-root .` the paths are relative,
    and the second assignment's test once imported the first one's file (ImportError during `generate`)."""
    from pathlib import Path

    from autograder.grading.hidden_tests import HiddenTest
    from autograder.manifest import REPO_ROOT

    monkeypatch.chdir(REPO_ROOT)
    first = Path("solutions/maxent_irl/tests/test_maxent_irl_update.py")
    second = Path("solutions/math_grpo/tests/test_policy_gradient_loss.py")
    assert "_stand_ins" in first.read_text() and "_stand_ins" in second.read_text()
    assert HiddenTest(first.stem, first).module and HiddenTest(second.stem, second).module


def test_a_blank_todo_gets_one_line_that_says_it_is_not_written(folder):
    """Issue 41: a blank notebook's feedback said what each check compares ("the values are already wrong for
    a list") instead of what to do; now one line whatever the judge."""
    test = hidden_tests.load(folder)["test_double"]
    expected = {"small": Observe().plain(np.arange(3.0) * 2), "raises": {"type": "error", "error": "TypeError"}}
    unwritten = {"type": "error", "error": "NotImplementedError", "message": ""}
    blank = {"observations": {"small": unwritten, "raises": unwritten}}
    verdict = hidden_tests.judge(test, blank, expected, "test_double")
    assert verdict.score == 0 and verdict.failures == [
        "TODO 1 (double), not written yet: small raised NotImplementedError (replace the `raise "
        "NotImplementedError()` of the function it calls with your code)"]
