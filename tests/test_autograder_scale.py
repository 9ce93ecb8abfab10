"""LMS import (collect), parallel and Ray grading give the same results, late marking, GPU gating."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "course"
RELEASE = FIXTURE / "notebooks" / "toy_add" / "toy_add.ipynb"
SOLUTION = FIXTURE / "solutions" / "toy_add" / "toy_add.ipynb"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True)


def _filled(path: Path, patches=None) -> Path:
    from autograder.authoring.course import fill_release

    fill_release(RELEASE, SOLUTION, path, patches=patches)
    return path


def _adapter_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as handle:
        handle.writestr("artifacts/adapter/adapter_config.json", json.dumps({"base_model_name_or_path": "tiny"}))


def test_collect_canvas_zip(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    _filled(raw / "doejane_1234_567890_toy_add.ipynb")
    _filled(raw / "smithbob_late_2345_678901_toy_add-1.ipynb")
    _adapter_zip(raw / "smithbob_late_2345_678902_artifacts.zip")
    (raw / "README.txt").write_text("not a submission")
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as handle:
        for path in raw.iterdir():
            handle.write(path, f"submissions/{path.name}")
    result = cli("--course-root", str(FIXTURE), "collect", str(download), "--assignment", "toy_add",
                 "--out", str(tmp_path / "subs"))
    assert result.returncode == 0, result.stderr
    subs = tmp_path / "subs"
    assert (subs / "doejane" / "toy_add" / "toy_add.ipynb").exists()
    assert (subs / "smithbob" / "toy_add" / "toy_add.ipynb").exists()
    assert (subs / "smithbob" / "toy_add" / "artifacts" / "adapter" / "adapter_config.json").exists()
    assert "unmatched: README.txt" in result.stdout
    assert (subs / "_unmatched" / "README.txt").exists()
    assert "canvas" in result.stdout


def test_collect_moodle_gradescope_and_plain(tmp_path):
    from autograder.intake.lms import collect

    moodle = tmp_path / "moodle"
    folder = moodle / "Jane Doe_4242_assignsubmission_file_"
    (folder / "hw" / "artifacts" / "adapter").mkdir(parents=True)
    _filled(folder / "hw" / "My Notebook.ipynb")
    (folder / "hw" / "artifacts" / "adapter" / "adapter_config.json").write_text("{}")
    _filled(moodle / "Bob Smith_4343_assignsubmission_file_toy_add.ipynb")
    report = collect(moodle, "toy_add", tmp_path / "m")
    assert set(report.students) == {"jane_doe_4242", "bob_smith_4343"} and not report.unmatched
    assert (tmp_path / "m" / "jane_doe_4242" / "toy_add" / "toy_add.ipynb").exists()
    assert (tmp_path / "m" / "jane_doe_4242" / "toy_add" / "artifacts" / "adapter" / "adapter_config.json").exists()

    gradescope = tmp_path / "gs"
    _filled((gradescope / "submission_111").mkdir(parents=True) or gradescope / "submission_111" / "toy_add.ipynb")
    (gradescope / "submission_222").mkdir()
    (gradescope / "submission_222" / "notes.txt").write_text("forgot the notebook")
    (gradescope / "submission_metadata.yml").write_text(
        "submission_111:\n  :submitters:\n  - :name: Ann Lee\n    :sid: 'a123'\n    :email: ann@uni.edu\n"
        "  :created_at: 2026-01-10 12:00:00.000000000 +00:00\n"
        "submission_222:\n  :submitters:\n  - :name: Cy Dee\n    :email: cy@uni.edu\n")
    report = collect(gradescope, "toy_add", tmp_path / "g")
    assert set(report.students) == {"a123", "cy"}
    # the LMS's own time is kept in the report (never as a timestamp.txt a student could have made)
    assert report.submissions["a123"]["submitted_at"].startswith("2026-01-10")
    assert report.submissions["a123"]["timestamp_source"] == "gradescope submission_metadata.yml"
    assert not (tmp_path / "g" / "a123" / "toy_add" / "timestamp.txt").exists()
    assert any("cy" in path and "no notebook" in why for path, why in report.unmatched)

    plain = tmp_path / "plain"
    plain.mkdir()
    _filled(plain / "alice.ipynb")
    (plain / "grades.xlsx").write_bytes(b"PK")
    report = collect(plain, "toy_add", tmp_path / "p")
    assert set(report.students) == {"alice"}
    assert report.unmatched == [("grades.xlsx", "file name matches no LMS convention")]


def test_a_gradescope_sid_typed_by_two_people_never_merges_them(tmp_path):
    """Issue 31: Bob typed Ann's SID; his submission overwrote hers and her LMS row said 0, silently."""
    from autograder.intake.lms import collect

    gradescope = tmp_path / "gs"
    for folder, patches in (("submission_111", None),
                            ("submission_333", [{"grade_id": "add", "old": "return a + b", "new": "return a - b"}])):
        (gradescope / folder).mkdir(parents=True)
        _filled(gradescope / folder / "toy_add.ipynb", patches)
    (gradescope / "submission_metadata.yml").write_text(
        "submission_111:\n  :submitters:\n  - :name: Ann Lee\n    :sid: 'a123'\n    :email: ann@uni.edu\n"
        "submission_333:\n  :submitters:\n  - :name: Bob Roe\n    :sid: 'a123'\n    :email: bob@uni.edu\n")
    report = collect(gradescope, "toy_add", tmp_path / "g")
    assert sorted(report.students) == ["a123", "a123-2"]
    names = {folder: report.submissions[folder]["name"] for folder in report.students}
    assert sorted(names.values()) == ["Ann Lee", "Bob Roe"]
    ann = next(f for f, n in names.items() if n == "Ann Lee")
    assert (tmp_path / "g" / ann / "toy_add" / "toy_add.ipynb").read_bytes() == \
        (gradescope / "submission_111" / "toy_add.ipynb").read_bytes()
    assert any("both submitted under the gradescope id 'a123'" in line for line in report.collisions), report.collisions
    assert any("collision" in line and "a123" in line for line in report.lines())


@pytest.fixture(scope="module")
def small_batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    subs = root / "subs"
    (subs / "ann" / "toy_add").mkdir(parents=True)
    _filled(subs / "ann" / "toy_add" / "toy_add.ipynb")
    (subs / "bob" / "toy_add").mkdir(parents=True)
    _filled(subs / "bob" / "toy_add" / "toy_add.ipynb",
            [{"grade_id": "add", "old": "return a + b", "new": "return a - b"}])
    # bob uploads a timestamp.txt claiming he was early: it never decides lateness
    (subs / "bob" / "toy_add" / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    # what `collect` records from the LMS (here: Gradescope's submission times)
    (subs / "_collect_report.json").write_text(json.dumps({"submissions": {
        "ann": {"lms": "gradescope", "user_id": "a1", "name": "Ann", "submitted_at": "2026-01-01T10:00:00+00:00",
                "timestamp_source": "gradescope submission_metadata.yml"},
        "bob": {"lms": "gradescope", "user_id": "b2", "name": "Bob", "submitted_at": "2026-01-03T10:00:00+00:00",
                "timestamp_source": "gradescope submission_metadata.yml"}}}))
    return root, subs


def _key(results):
    return [(r.student, r.assignment, r.score, r.max_score, r.status, r.cells, r.feedback, r.late) for r in results]


@pytest.mark.slow
def test_workers_and_ray_give_identical_results(small_batch):
    import ray  # noqa: F401  (pinned in requirements.txt)

    from autograder.grading.batch import Request, autograde
    from autograder.manifest import load_assignments

    root, subs = small_batch
    assignments = load_assignments(FIXTURE)
    kwargs = dict(profile="tiny", deadline="2026-01-02T00:00:00Z")
    # (bench/bench_autograde.py checks --workers 1 against --workers 2 on 16 IRL submissions)
    one = autograde(subs, root / "one", assignments, Request(workers=2, **kwargs))
    on_ray = autograde(subs, root / "ray", assignments, Request(ray_address="local", **kwargs))
    # (once seen to differ under load: outputs arriving after nbclient's 10 s iopub wait were dropped;
    # the grader now waits 60 s and backs a reply's error up, see GuardedExecute._check_raise_for_error)
    assert _key(one) == _key(on_ray), json.dumps(
        [[k, r] for k, r in zip(_key(one), _key(on_ray), strict=False) if k != r], default=str, indent=1)
    assert [(r.student, r.score, r.status, r.late) for r in one] == [("ann", 2, "ok", False),
                                                                     ("bob", 0, "failed-tests", True)]
    for out in ("one", "ray"):
        assert (root / out / "feedback" / "bob" / "toy_add" / "results.json").exists()
        rows = list(csv.DictReader(open(root / out / "grades.csv")))
        assert [row["late"] for row in rows] == ["", "late"]
        assert rows[1]["timestamp_source"] == "gradescope submission_metadata.yml"
        lms = list(csv.DictReader(open(root / out / "lms_grades.csv")))
        assert [(r["lms_user_id"], r["name"], r["late"]) for r in lms] == [("a1", "Ann", ""), ("b2", "Bob", "late")]


@pytest.mark.slow
def test_gpu_assignment_on_cpu_grader_fails_clearly_unless_tiny(small_batch, monkeypatch):
    from autograder.grading.batch import Request, autograde
    from autograder.manifest import load_assignments

    root, subs = small_batch
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # a CPU-only grader, whatever this machine has
    import dataclasses

    assignments = [dataclasses.replace(a, needs_gpu={"tiny": False, "full": True}) for a in load_assignments(FIXTURE)]
    results = autograde(subs, root / "gpu", assignments, Request(workers=2, profile="full"))
    assert {r.status for r in results} == {"no-gpu"}
    assert all(len(r.feedback) == 1 and "needs a GPU" in r.feedback[0] and "--profile tiny" in r.feedback[0]
               for r in results)


def test_local_ray_start_is_retried_when_its_node_times_out():
    """Ray waits a fixed 30 s for its raylet; on loaded cores a local start can miss that."""
    from autograder.grading.ray_runner import start_local_ray

    class FakeRay:
        def __init__(self, failures, message="The current node timed out during startup."):
            self.failures, self.message, self.calls, self.shutdowns = failures, message, 0, 0

        def init(self, **kwargs):
            self.calls += 1
            if self.calls <= self.failures:
                raise Exception(self.message)

        def shutdown(self):
            self.shutdowns += 1

    slow = FakeRay(failures=2)
    start_local_ray(slow)
    assert (slow.calls, slow.shutdowns) == (3, 2)
    with pytest.raises(Exception, match="timed out"):
        start_local_ray(FakeRay(failures=3))
    with pytest.raises(Exception, match="port in use"):  # other errors are not retried
        start_local_ray(FakeRay(failures=1, message="port in use"))


def test_ray_packing_round_trips_and_refuses_escapes_without_extraction_filters(tmp_path):
    """Ray moves folders as tarballs; Python 3.11.0-3.11.3 (Debian 12) has no `filter=`, so the
    fallback keeps plain files and folders inside the target and refuses anything else."""
    import io
    import tarfile

    from autograder.grading import ray_runner

    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "x.txt").write_text("hi")
    data = ray_runner.pack(tmp_path / "src")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(tmp_path / "out", members=ray_runner._plain_members(tar, tmp_path / "out"))
    assert (tmp_path / "out" / "a" / "x.txt").read_text() == "hi"
    assert (ray_runner.unpack(data, tmp_path / "out2") / "a" / "x.txt").read_text() == "hi"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.addfile(tarfile.TarInfo("../escape"), io.BytesIO(b""))
    with tarfile.open(fileobj=io.BytesIO(buffer.getvalue()), mode="r:gz") as tar, \
            pytest.raises(ValueError, match="escape"):
        ray_runner._plain_members(tar, tmp_path / "out3")


def test_recorder_reads_earlier_results_once_per_batch(tmp_path, monkeypatch):
    """grades.csv is rewritten after every submission with this batch's rows and earlier runs' rows;
    the earlier ones are read from OUT once, not once per submission (quadratic at 300 students)."""
    from autograder.grading import record as record_module
    from autograder.outcome import Outcome, Result, Settings
    from autograder.reports.feedback import write_result_files

    out, template = tmp_path / "out", tmp_path / "template"
    out.mkdir()
    template.mkdir()
    for student in ("earlier_a", "earlier_b", "regraded"):  # a previous run on the same OUT
        write_result_files(Result(student=student, assignment="toy_add", score=1.0, max_score=2.0), out)
    reads = []
    real = record_module.load_results
    monkeypatch.setattr(record_module, "load_results", lambda where: reads.append(where) or real(where))
    recorder = record_module.Recorder(out, template, Settings())
    for student, score in (("new_1", 2.0), ("regraded", 2.0), ("new_2", 0.0)):
        recorder(Outcome(Result(student=student, assignment="toy_add", score=score, max_score=2.0)))
        rows = {row["student"]: row["score"] for row in csv.DictReader(open(out / "grades.csv"))}
        assert rows["earlier_a"] == rows["earlier_b"] == "1" and student in rows, rows
    assert rows == {"earlier_a": "1", "earlier_b": "1", "regraded": "2", "new_1": "2", "new_2": "0"}
    assert len(reads) == 1, reads


def test_each_feedback_file_is_written_once_per_submission(tmp_path, monkeypatch):
    """The grading worker keeps nbgrader's page as a body; the Recorder writes the page (summary on the
    body), result.json and results.json once each when the result comes back."""
    import time
    from collections import Counter

    from autograder.grading import record as record_module
    from autograder.outcome import Outcome, Result, Settings
    from autograder.reports import feedback

    out, template = tmp_path / "out", tmp_path / "template"
    out.mkdir()
    template.mkdir()
    nbgrader_page = tmp_path / "nbgrader.html"
    nbgrader_page.write_text("<html><body><p>your cells</p></body></html>")
    writes = Counter()
    real = Path.write_text
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: writes.update([self.name]) or real(self, *a, **k))
    result = Result(student="ann", assignment="toy_add", score=2.0, max_score=2.0, feedback=["all good"])
    recorder = record_module.Recorder(out, template, Settings())
    recorder(Outcome(feedback.finish(result, out, time.perf_counter(), nbgrader_page)))
    assert writes["toy_add.html"] == 2 and writes["result.json"] == writes["results.json"] == 1, writes  # body, page
    page = (out / "feedback" / "ann" / "toy_add" / "toy_add.html").read_text()
    assert page.index("autograder-summary") < page.index("your cells") and "all good" in page
    again = Result(student="ann", assignment="toy_add", score=0.0, max_score=2.0, status="invalid")
    recorder(Outcome(feedback.finish(again, out, time.perf_counter(), None)))  # regraded: no notebook this time
    assert "your cells" not in (out / "feedback" / "ann" / "toy_add" / "toy_add.html").read_text()
