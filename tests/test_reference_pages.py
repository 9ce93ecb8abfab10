"""Reference outputs for graders: every executed reference as a self-contained HTML page."""
from __future__ import annotations

import html
import subprocess
import sys

import nbformat
import pytest

from autograder.authoring.references import FOLDER, write_pages_from
from autograder.manifest import REPO_ROOT, load_assignments

IDS = [a.id for a in load_assignments(REPO_ROOT)]
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", IDS)
def test_each_reference_page_shows_the_executed_run(executed_references, assignment, tmp_path):
    pages = write_pages_from(executed_references.submissions, [assignment], tmp_path)
    assert pages == [tmp_path / FOLDER / assignment / f"{assignment}.html"]
    text = html.unescape(pages[0].read_text())
    executed = nbformat.read(executed_references.reference_dir(assignment) / f"{assignment}.ipynb", as_version=4)
    printed = [out["text"].strip() for cell in executed.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []) if out.get("output_type") == "stream" and out["text"].strip()]
    assert printed, f"the executed {assignment} reference printed nothing"
    for line in printed[:5]:  # what the reference printed is on the page graders open
        assert line.splitlines()[0] in text
    images = sum(1 for cell in executed.cells for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))
    assert text.count("data:image/png") >= images  # plots are inline: the page works offline, on its own


def test_the_command_writes_pages_outside_the_release(tmp_path):
    run = subprocess.run([sys.executable, "-m", "autograder", "references", "--out", str(tmp_path),
                          "--assignment", "maxent_irl"], capture_output=True, text=True, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    page = tmp_path / FOLDER / "maxent_irl" / "maxent_irl.html"
    assert f"reference output: {page}" in run.stdout and page.stat().st_size > 10_000
    assert not (REPO_ROOT / "notebooks" / "maxent_irl" / FOLDER).exists()
