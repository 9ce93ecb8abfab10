"""The pre-submission checker on small synthetic notebooks."""
from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest

from helpers import submission

HEADER = "---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n---"


def make_notebook(*cells, header=HEADER):
    nb = nbformat.v4.new_notebook()
    if header is not None:
        nb.cells.append(nbformat.v4.new_raw_cell(header))
    nb.cells.extend(cells)
    return nb


def write(tmp_path, nb, name="nb.ipynb"):
    path = tmp_path / name
    nbformat.write(nb, str(path))
    return path


def test_small_notebook_with_header_passes(tmp_path):
    path = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("# Title\n\nSome text.")))
    report = submission.check_notebook(path)
    assert report.ok and report.header_ok and report.within_limit
    assert report.render_problems == []
    assert report.characters == len(report.markdown)
    assert report.markdown.startswith("---\nformat:")


def test_character_count_includes_code_and_text_outputs(tmp_path):
    code = nbformat.v4.new_code_cell("print('x' * 50)")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 50 + "\n")]
    short = submission.check_notebook(write(tmp_path, make_notebook(), "a.ipynb")).characters
    longer = submission.check_notebook(write(tmp_path, make_notebook(code), "b.ipynb")).characters
    assert longer - short >= 50 + len("print('x' * 50)")


def test_over_the_limit_fails(tmp_path):
    nb = make_notebook(nbformat.v4.new_markdown_cell("word " * 9000))  # 45,000 characters
    path = write(tmp_path, nb)
    report = submission.check_notebook(path)
    assert report.characters > submission.CHARACTER_LIMIT
    assert not report.within_limit and not report.ok
    assert "FAIL" in report.format()
    assert submission.check_notebook(path, limit=100_000).ok


def test_exactly_at_the_limit_passes(tmp_path):
    path = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("hello")))
    n = submission.check_notebook(path).characters
    assert submission.check_notebook(path, limit=n).ok
    assert not submission.check_notebook(path, limit=n - 1).ok


@pytest.mark.parametrize(
    "header, reason",
    [
        (None, "does not start"),  # first cell is the markdown title
        ("format: html\njupyter: python3", "does not start"),
        ("---\nformat:\n  html:\n    code-fold: false\njupyter: python3\n---", "code-fold"),
        ("---\nformat:\n  html:\n    code-fold: true\n---", "jupyter: python3"),
        ("---\nformat: [unclosed\n---", "does not parse"),
        ("---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n", "does not start"),
    ],
)
def test_missing_or_wrong_header_fails(tmp_path, header, reason):
    nb = make_notebook(nbformat.v4.new_markdown_cell("# Title"), header=header)
    report = submission.check_notebook(write(tmp_path, nb))
    assert not report.header_ok and not report.ok
    assert reason in report.header_message
    assert report.within_limit


def test_header_as_markdown_cell_is_accepted(tmp_path):
    nb = make_notebook(header=None)
    nb.cells.append(nbformat.v4.new_markdown_cell(HEADER))
    assert submission.check_notebook(write(tmp_path, nb)).header_ok


def test_header_in_a_code_cell_is_rejected(tmp_path):
    nb = make_notebook(header=None)
    nb.cells.append(nbformat.v4.new_code_cell(HEADER))
    ok, message = submission.check_header(nb)
    assert not ok and "code cell" in message


def test_bad_cells_are_reported(tmp_path):
    error_cell = nbformat.v4.new_code_cell("1/0")
    error_cell.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                 traceback=["\x1b[31mZeroDivisionError\x1b[0m"])]
    bar_cell = nbformat.v4.new_code_cell("train()")
    bar_cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="10%|#  |\r20%|## |\r100%|###|\n")]
    widget_cell = nbformat.v4.new_code_cell("tqdm.auto")
    widget_cell.outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "HBox(children=(...))", submission.WIDGET_MIME: {"model_id": "x"}})]
    long_cell = nbformat.v4.new_code_cell("for i in range(500): print(i)")
    long_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(map(str, range(500))))]
    fence_cell = nbformat.v4.new_markdown_cell("Look:\n```python\nx = 1\n")
    math_cell = nbformat.v4.new_markdown_cell("$$\nA_i = r_i - \\bar r\n")
    todo_cell = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
    good_cell = nbformat.v4.new_markdown_cell("Fine: $x$ and\n$$y$$\n```\ncode\n```")
    nb = make_notebook(error_cell, bar_cell, widget_cell, long_cell, fence_cell, math_cell, todo_cell, good_cell)
    problems = submission.render_problems(nb)
    assert {p.cell for p in problems} == {2, 3, 4, 5, 6}, [str(p) for p in problems]
    text = "\n".join(map(str, problems))
    for word in ("carriage return", "widget", "lines", "code fence", "$$"):
        assert word in text
    blocking = submission.blocking_problems(nb)
    assert {p.cell for p in blocking} == {1, 7} and "error" in str(blocking[0]) and "placeholder" in str(blocking[1])
    report = submission.check_notebook(write(tmp_path, nb))
    assert not report.ok, "an error output or a placeholder is never ready"
    assert "may render badly" in report.format() and "NOT ready to submit" in report.format()
    fixed = make_notebook(bar_cell, widget_cell, long_cell, fence_cell, math_cell, good_cell)
    report = submission.check_notebook(write(tmp_path, fixed, "fixed.ipynb"))
    assert report.ok, "render warnings alone do not fail the check"
    assert report.format().endswith("=> ready to submit (look at the warnings above first)")


def _course_notebook(answered: int, run: bool) -> nbformat.NotebookNode:
    """A notebook shaped like a release: headings, TODO sections, a code and a written answer
    in each of three TODOs; ``answered`` of them filled in; ``run``: outputs present."""
    cells = [nbformat.v4.new_markdown_cell("# Assignment\n\nIntro."),
             nbformat.v4.new_code_cell("import math\nprint('setup')")]
    for n in (1, 2, 3):
        done = n <= answered
        cells.append(nbformat.v4.new_markdown_cell(f"### TODO {n}: part {n} (4 points)\n\nImplement it."))
        cells.append(nbformat.v4.new_code_cell(
            f"def part{n}(x):\n    return x + {n}" if done else
            f"def part{n}(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"))
        cells.append(nbformat.v4.new_code_cell(f"assert part{n}(1) == {n + 1}"))
        cells.append(nbformat.v4.new_markdown_cell(f"Why does part {n} work?"))
        cells.append(nbformat.v4.new_markdown_cell("Because it adds." if done else "YOUR ANSWER HERE"))
    nb = make_notebook(*cells)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        if run:
            cell.execution_count = count
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")] if count == 1 else []
    return nb


def test_ready_only_when_every_answer_is_filled_and_the_notebook_was_run(tmp_path):
    unanswered = submission.check_notebook(write(tmp_path, _course_notebook(answered=0, run=True), "a.ipynb"))
    assert not unanswered.ok and len(unanswered.blocking) == 6
    text = unanswered.format()
    assert "[FAIL] 6 answer(s) still to do:" in text and "=> NOT ready to submit: 6 answer(s) still to do" in text
    assert "ready to submit" not in text.replace("NOT ready to submit", "")
    never_run = submission.check_notebook(write(tmp_path, _course_notebook(answered=3, run=False), "b.ipynb"))
    assert not never_run.ok and "not run" in never_run.format().splitlines()[-1]
    assert "Run All" in str(never_run.blocking[0])
    done = submission.check_notebook(write(tmp_path, _course_notebook(answered=3, run=True), "c.ipynb"))
    assert done.ok and done.blocking == [] and done.format().endswith("=> ready to submit")


def test_cells_are_named_as_a_student_finds_them(tmp_path):
    nb = _course_notebook(answered=1, run=True)
    report = submission.check_notebook(write(tmp_path, nb))
    wheres = [p.where for p in report.blocking]
    assert wheres == [
        'under "TODO 2: part 2 (4 points)", the 1st code cell starting "def part2(x):"',
        'under "TODO 2: part 2 (4 points)", the 2nd text cell starting "YOUR ANSWER HERE"',
        'under "TODO 3: part 3 (4 points)", the 1st code cell starting "def part3(x):"',
        'under "TODO 3: part 3 (4 points)", the 2nd text cell starting "YOUR ANSWER HERE"',
    ], wheres
    text = report.format()
    assert not re.search(r"\bcell \d+\b", text), text  # no index a student cannot see
    for where in wheres:
        assert where in text
    locations = submission.cell_locations(nb)
    assert locations[1] == 'the markdown cell "Assignment"'
    assert locations[2] == 'under "Assignment", the 1st code cell starting "import math"'


def test_the_release_notebooks_are_not_ready_and_name_their_todos():
    from autograder.manifest import REPO_ROOT

    path = REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
    report = submission.check_notebook(path)
    assert not report.export_graded and not report.ok  # maxent_irl is not graded on its export
    cells = nbformat.read(path, as_version=4).cells
    stubs = [i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("solution")]  # nbgrader's stubs
    assert any("YOUR ANSWER HERE" in c.source and not c.metadata.get("nbgrader", {}).get("solution")
               for c in cells), "instructions that quote the placeholder (they must not count)"
    todo = [p for p in report.blocking if "placeholder" in p.message]
    assert len(todo) + len(report.optional) == len(stubs) and len(report.optional) == 2  # the extension's two
    assert any('under "TODO 1: empirical feature expectations' in p.where for p in todo), [p.where for p in todo]
    assert "markdown export" not in report.format() and "quarto header" not in report.format()
    tiny = submission.check_notebook(REPO_ROOT / "notebooks" / "tiny_grpo" / "tiny_grpo.ipynb")
    assert tiny.export_graded and not tiny.ok and tiny.characters > 0
    assert tiny.format().count("\n") == 1 and "not run" in tiny.format()  # one line says what to do first


def test_an_untouched_optional_extension_is_ready_to_submit_and_pack_says_what_is_missing(tmp_path, capsys):
    """Issue 31: a maxent_irl notebook with every graded TODO and written answer done but the optional
    extension untouched was never "ready to submit"; pack said "hand in this zip" for a half-done one."""
    from autograder.authoring.course import fill_release
    from autograder.manifest import REPO_ROOT

    release = REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb"
    solution = REPO_ROOT / "solutions" / "maxent_irl" / "maxent_irl.ipynb"
    done = tmp_path / "maxent_irl.ipynb"
    fill_release(release, solution, done)
    nb = nbformat.read(done, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ("svf_stable", "irl_trace"):  # the extension: left as released
            cell.source = next(c.source for c in nbformat.read(release, as_version=4).cells
                               if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = 1, [nbformat.v4.new_output("stream", text="ran\n")]
    nbformat.write(nb, done)
    report = submission.check_notebook(done)
    assert report.ok and len(report.optional) == 2, report.format()
    assert "ready to submit" in report.format() and "2 optional TODO(s) left open" in report.format()

    half = tmp_path / "half" / "maxent_irl.ipynb"
    half.parent.mkdir()
    nb.cells = [c if c.metadata.get("nbgrader", {}).get("grade_id") != "q2" else
                nbformat.v4.new_markdown_cell("YOUR ANSWER HERE", metadata=c.metadata) for c in nb.cells]
    nbformat.write(nb, half)
    submission.pack("maxent_irl", notebook=half, artifacts=tmp_path / "none", out=tmp_path / "out.zip", download=False)
    printed = capsys.readouterr().out
    assert "NOT ready to hand in yet (1 answer(s) still to do)" in printed and "hand in this zip" not in printed
    for cell in nb.cells:  # never run: pack says so in two words, the check's one line says what to do
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = None, []
    nbformat.write(nb, half)
    submission.pack("maxent_irl", notebook=half, artifacts=tmp_path / "none", out=tmp_path / "out.zip", download=False)
    printed = capsys.readouterr().out
    assert "NOT ready to hand in yet (not run; 1 answer(s) still to do)" in printed, printed


def test_command_line_exit_codes(tmp_path):
    good = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("# ok")), "good.ipynb")
    todo = write(tmp_path, _course_notebook(answered=2, run=True), "todo.ipynb")
    never_run = write(tmp_path, _course_notebook(answered=3, run=False), "never.ipynb")
    no_header = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("# t"), header=None), "bad.ipynb")
    too_long = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("y" * 200)), "long.ipynb")
    run = lambda *args: subprocess.run([sys.executable, "-m", "helpers.submission", *map(str, args)],  # noqa: E731
                                       capture_output=True, text=True)
    result = run(good, "--write", tmp_path / "out.md")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ready to submit" in result.stdout
    assert (tmp_path / "out.md").read_text().startswith("---")
    assert run(no_header).returncode == 1
    for path in (todo, never_run):
        result = run(path)
        assert result.returncode == 1 and "NOT ready to submit" in result.stdout, result.stdout
    assert run(too_long, "--limit", 100).returncode == 1
    assert run(tmp_path / "nope.ipynb").returncode == 2


def test_check_prints_the_report(tmp_path, capsys):
    path = write(tmp_path, make_notebook(nbformat.v4.new_markdown_cell("# ok")))
    report = submission.check(path)
    assert "markdown export" in capsys.readouterr().out
    assert report.ok


def test_a_written_answer_is_named_by_its_question(tmp_path):
    """Issue 41: "the answer to Question 2", not "the 4th text cell"."""
    nb = make_notebook(nbformat.v4.new_markdown_cell("## Part 1"),
                       nbformat.v4.new_markdown_cell("**Question 2.** Why?"),
                       nbformat.v4.new_markdown_cell("YOUR ANSWER HERE"),
                       nbformat.v4.new_markdown_cell("**Problem 16.** Show the curve."),
                       nbformat.v4.new_markdown_cell("YOUR ANSWER HERE"))
    locations = submission.cell_locations(nb)
    assert locations[3] == 'the answer to Question 2 (under "Part 1")'
    assert locations[5] == 'the answer to Problem 16 (under "Part 1")'
