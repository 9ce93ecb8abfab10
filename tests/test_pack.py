"""helpers.submission.pack: one zip with <id>.ipynb and artifacts/ at the top level, locally and
on Colab (a fake google.colab); the export check on Colab; one-line errors."""
from __future__ import annotations

import json
import zipfile

import colab_fake
import nbformat
import pytest

from helpers import submission

HEADER = "---\nformat:\n  html:\n    code-fold: true\njupyter: python3\n---"


def course_notebook(text="answer") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_raw_cell(HEADER))
    cell = nbformat.v4.new_code_cell(f"x = {text!r}")
    cell.execution_count = 1  # run, as a notebook handed in is
    cell.metadata["nbgrader"] = {"grade_id": "answer", "solution": True, "grade": False, "locked": False,
                                 "schema_version": 3, "task": False}
    nb.cells.append(cell)
    return nb


def fake_adapter(folder, size=1000):
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"r": 4}))
    (folder / "adapter_model.safetensors").write_bytes(b"\0" * size)
    (folder / "course_kit_adapter.json").write_text("{}")


@pytest.fixture()
def workdir(monkeypatch, tmp_path):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("COURSE_ARTIFACTS_DIR", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def names(path):
    with zipfile.ZipFile(path) as archive:
        return sorted(archive.namelist())


def test_pack_locally(workdir, capsys):
    nbformat.write(course_notebook(), workdir / "grpo_format.ipynb")
    fake_adapter(workdir / "artifacts" / "grpo_format_adapter")
    (workdir / "artifacts" / "checkpoints" / "train" / "step-000010").mkdir(parents=True)
    (workdir / "artifacts" / "checkpoints" / "train" / "step-000010" / "trainer.pt").write_bytes(b"x" * 10)
    (workdir / "artifacts" / "plot.png").write_bytes(b"png")
    out = submission.pack("grpo_format")
    assert out == workdir / "grpo_format_submission.zip"
    assert names(out) == ["artifacts/grpo_format_adapter/adapter_config.json",
                          "artifacts/grpo_format_adapter/adapter_model.safetensors",
                          "artifacts/grpo_format_adapter/course_kit_adapter.json",
                          "artifacts/plot.png", "grpo_format.ipynb"]  # no checkpoints
    assert submission.zip_problems(out, "grpo_format") == []
    with zipfile.ZipFile(out) as archive:
        packed = nbformat.reads(archive.read("grpo_format.ipynb").decode(), as_version=4)
        assert packed.cells[1].source == "x = 'answer'"
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f"submission: {out} (grpo_format.ipynb + 4 artifact file(s), 0.0 MB); hand in this zip"]


def test_pack_on_colab_fetches_the_notebook_and_downloads(workdir, monkeypatch, capsys):
    fake = colab_fake.install(monkeypatch, notebook=json.loads(nbformat.writes(course_notebook("from colab"))))
    artifacts = workdir / "drive" / "MyDrive" / "course-kit" / "tiny_grpo" / "artifacts"
    monkeypatch.setattr("helpers.runtime.DRIVE_MOUNTPOINT", workdir / "drive")
    fake_adapter(artifacts / "tiny_grpo_adapter")
    out = submission.pack("tiny_grpo")
    assert out == artifacts.parent / "tiny_grpo_submission.zip"  # on Drive, beside the artifacts
    assert fake.requests and fake.requests[0][0] == "get_ipynb"
    assert fake.downloads == [str(out)]
    assert names(out) == ["artifacts/tiny_grpo_adapter/adapter_config.json",
                          "artifacts/tiny_grpo_adapter/adapter_model.safetensors",
                          "artifacts/tiny_grpo_adapter/course_kit_adapter.json", "tiny_grpo.ipynb"]
    with zipfile.ZipFile(out) as archive:
        assert "from colab" in archive.read("tiny_grpo.ipynb").decode()
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1 and printed[0].endswith("; download started; hand in this zip")


def test_export_check_on_colab_reads_the_open_notebook(workdir, monkeypatch, capsys):
    big = course_notebook()
    big.cells.append(nbformat.v4.new_markdown_cell("word " * 9000))
    colab_fake.install(monkeypatch, notebook=json.loads(nbformat.writes(big)))
    report = submission.check("tiny_grpo.ipynb")  # not on disk: Colab's copy is checked
    assert report.characters > submission.CHARACTER_LIMIT and not report.ok
    assert report.path == "<open notebook>"
    assert "FAIL" in capsys.readouterr().out
    assert submission.check().characters == report.characters


def test_pack_warns_when_tiny_grpo_export_is_over_the_limit(workdir, capsys):
    big = course_notebook()
    big.cells.append(nbformat.v4.new_markdown_cell("word " * 9000))
    nbformat.write(big, workdir / "tiny_grpo.ipynb")
    fake_adapter(workdir / "artifacts" / "tiny_grpo_adapter")
    submission.pack("tiny_grpo")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "NOT ready to hand in yet (" in lines[0] and "hand in this zip" not in lines[0]
    assert "over the character limit" in lines[0] and "run submission.check()" in lines[0]


def one_line_error(match, **kwargs):
    with pytest.raises(submission.SubmissionError) as error:
        submission.pack(**kwargs)
    message = str(error.value)
    assert "\n" not in message and message.startswith(match), message
    return message


def test_errors_are_one_actionable_line(workdir, monkeypatch):
    one_line_error("notebook not found: no grpo_format.ipynb in", assignment_id="grpo_format")
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    nbformat.write(plain, workdir / "grpo_format.ipynb")
    one_line_error("the notebook has no graded cells", assignment_id="grpo_format")
    nbformat.write(course_notebook(), workdir / "grpo_format.ipynb")
    message = one_line_error("missing adapter:", assignment_id="grpo_format")
    assert "run the training cell" in message
    (workdir / "artifacts" / "grpo_format_adapter").mkdir(parents=True)
    (workdir / "artifacts" / "grpo_format_adapter" / "adapter_config.json").write_text("{}")
    assert "has no adapter_model.safetensors" in one_line_error("missing adapter:", assignment_id="grpo_format")
    (workdir / "artifacts" / "grpo_format_adapter").rename(workdir / "gone")
    fake_adapter(workdir / "artifacts" / "grpo_format_adapter", size=3_000_000)
    monkeypatch.setattr(submission, "pack_limit_mb", lambda assignment_id: 2)  # the manifest's pack_mb
    message = one_line_error("artifacts too large: the submission holds 3.0 MB, over the 2 MB limit",
                             assignment_id="grpo_format")
    monkeypatch.undo()
    assert "grpo_format_adapter/adapter_model.safetensors (3.0 MB)" in message
    one_line_error("assignment_id must be", assignment_id="../x")
    (workdir / "broken.ipynb").write_text("{not json")
    one_line_error(f"{workdir / 'broken.ipynb'} could not be read as a notebook", assignment_id="grpo_format",
                   notebook=workdir / "broken.ipynb")
    assert not list(workdir.glob("*.zip")) and not list(workdir.glob(".pack-*"))
    # on Colab, an empty answer from the notebook API
    colab_fake.install(monkeypatch, notebook=None)
    one_line_error("Colab did not hand over the notebook", assignment_id="maxent_irl", artifacts=workdir / "none")


def test_maxent_irl_needs_no_artifacts(workdir):
    nbformat.write(course_notebook(), workdir / "maxent_irl.ipynb")
    assert names(submission.pack("maxent_irl")) == ["maxent_irl.ipynb"]


def test_zip_problems_name_the_wrong_shape(tmp_path):
    wrong = tmp_path / "wrong.zip"
    with zipfile.ZipFile(wrong, "w") as archive:
        archive.writestr("submission/grpo_format.ipynb", "{}")
        archive.writestr("submission/artifacts/grpo_format_adapter/adapter_config.json", "{}")
    problems = submission.zip_problems(wrong, "grpo_format")
    assert problems[0] == "no grpo_format.ipynb at the top level of the zip"
    assert "no artifacts/grpo_format_adapter/adapter_model.safetensors" in problems
    (tmp_path / "bad.zip").write_text("nope")
    assert "is not a readable zip" in submission.zip_problems(tmp_path / "bad.zip", "grpo_format")[0]


def test_required_artifacts_match_the_grader(tmp_path):
    from autograder.manifest import load_assignments

    for assignment in load_assignments():
        expected = [a.removeprefix("artifacts/") for a in assignment.artifacts]
        assert list(submission.required_artifacts(assignment.id)) == expected, assignment.id
