"""tools/gpu: the per-cell profile a GPU lease relies on, run here on a CPU."""
from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def test_cell_profile_times_every_cell_and_keeps_going_after_an_error(tmp_path, capsys):
    from tools.gpu import cell_profile

    folder = tmp_path / "nb"
    folder.mkdir()
    cells = [new_markdown_cell("# title"),
             new_code_cell("import os, time\nblock = bytearray(300 * 2**20)  # resident: 300 MiB"),
             new_code_cell("raise ValueError('broken on purpose')"),
             new_code_cell("time.sleep(0.5)\nopen('made_here.txt', 'w').write(os.environ['PROFILE_PROBE'])")]
    cells[1].metadata["nbgrader"] = {"grade_id": "alloc"}
    nbformat.write(new_notebook(cells=cells), folder / "probe.ipynb")
    out = tmp_path / "cells.json"

    assert cell_profile.main([str(folder / "probe.ipynb"), "--cwd", str(folder), "--set", "PROFILE_PROBE=seen",
                              "--out", str(out)]) == 0

    rows = json.loads(out.read_text())["cells"]
    assert [r["index"] for r in rows] == [1, 2, 3]  # code cells only, in order
    alloc, broken, last = rows
    assert alloc["cell"] == "alloc" and alloc["peak_rss_mib"] >= 300 and alloc["error"] == ""
    assert broken["error"].startswith("ValueError: broken on purpose")
    assert last["seconds"] >= 0.5 and last["error"] == ""  # ran after the error, in --cwd, with --set
    assert (folder / "made_here.txt").read_text() == "seen"
    printed = capsys.readouterr().out
    assert "ValueError: broken on purpose" in printed and "slowest:" in printed


@pytest.mark.slow
def test_smoke_grades_copies_of_a_reference_after_it(tmp_path, capsys):
    """The lease's grading numbers: ``--copies 2`` grades the reference and one copy in one batch,
    reference first (it pays for any start-up), and reports both (CPU dry run, maxent_irl)."""
    from tools.gpu import smoke

    out = tmp_path / "smoke"
    assert smoke.main(["--cpu-dry-run", "--assignment", "maxent_irl", "--copies", "2", "--out", str(out)]) == 0

    entry = json.loads((out / "smoke.json").read_text())["maxent_irl"]
    assert entry["failed_cells"] == [] and entry["unexpected"] == []
    assert (entry["graded"]["score"], entry["graded"]["max_score"], entry["graded"]["status"]) == ("28", "28", "ok")
    assert [(c["student"], c["score"], c["status"]) for c in entry["copies"]] == [("reference2", "28", "ok")]
    assert entry["copies_differ"] == []
    table_cell = f"{entry['graded']['seconds']}, then {entry['copies'][0]['seconds']} (copies: 28/28 ok)"
    assert table_cell in capsys.readouterr().out


def test_smoke_fails_when_a_copy_is_graded_unlike_the_reference(tmp_path, monkeypatch):
    """Identical submissions graded apart mean one grading changed the next: the run must fail."""
    from tools.gpu import smoke

    def fake_run(assignment, folder, env, timeout):
        folder.mkdir(parents=True)
        return 1.0, []

    def fake_grade(submissions, out, env, ids):
        assert sorted(p.name for p in submissions.iterdir()) == ["reference", "reference2"]
        row = {"assignment": "maxent_irl", "max_score": "28", "status": "ok", "seconds": "3.0", "feedback": ""}
        return {"maxent_irl": [{**row, "student": "reference", "score": "28"},
                               {**row, "student": "reference2", "score": "20"}]}

    monkeypatch.setattr(smoke, "prepare_hub", lambda hub, scale: (hub / "hf", hub / "math"))
    monkeypatch.setattr(smoke, "run_reference", fake_run)
    monkeypatch.setattr(smoke, "grade", fake_grade)
    out = tmp_path / "smoke"
    assert smoke.main(["--cpu-dry-run", "--assignment", "maxent_irl", "--copies", "2", "--out", str(out)]) == 1
    entry = json.loads((out / "smoke.json").read_text())["maxent_irl"]
    assert entry["copies_differ"] == ["reference2 graded 20/28 ok"]
