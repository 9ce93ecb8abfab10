"""Reference outputs for the people who grade written answers by hand.

    python -m autograder references --out OUT [--assignment ID ...]

Each solution is filled into its release and executed top to bottom in the tiny profile (the
same run as the demo's reference submission), then written as a self-contained HTML page with
its plots and printed numbers: ``OUT/reference_outputs/<id>/<id>.html`` beside the executed
notebook. Point OUT at the grading folder and the pages sit beside ``source/`` where formgrader
users work. They hold the model answers, so they are staff-only: nothing here is part of the
student release (``release`` writes notebooks without outputs and checks them for leaks).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat

from autograder.authoring.course import new_course
from autograder.demo import build_samples
from autograder.manifest import Assignment

FOLDER = "reference_outputs"
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}


def write_page(executed: Path, target_dir: Path) -> Path:
    """Copy an executed reference notebook into ``target_dir`` and write its HTML page there."""
    from nbconvert import HTMLExporter

    target_dir.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.read(executed, as_version=4)
    nbformat.write(notebook, target_dir / executed.name)
    body, _ = HTMLExporter().from_notebook_node(notebook)  # images stay inline (data URIs)
    page = target_dir / f"{executed.stem}.html"
    page.write_text(body, encoding="utf-8")
    return page


def write_pages_from(submissions: Path, assignment_ids: list[str], out: Path) -> list[Path]:
    """Pages for references that already ran (``submissions/reference/<id>/<id>.ipynb``, as the
    demo leaves them)."""
    pages = []
    for assignment_id in assignment_ids:
        executed = submissions / "reference" / assignment_id / f"{assignment_id}.ipynb"
        if executed.exists():
            pages.append(write_page(executed, Path(out) / FOLDER / assignment_id))
    return pages


def build(assignments: list[Assignment], out: Path, log=print) -> list[Path]:
    """Execute every reference (tiny profile) and write its page under ``OUT/reference_outputs``."""
    with tempfile.TemporaryDirectory(prefix="references-") as scratch:
        course = new_course(assignments, where=Path(scratch))
        submissions = Path(scratch) / "submissions"
        build_samples(assignments, course, submissions, TINY_ENV, log, execute_all=True)
        pages = write_pages_from(submissions, [a.id for a in assignments], out)
        shutil.rmtree(submissions, ignore_errors=True)
    return pages
