"""Shared fixtures: offline flags, the shipped tiny model, and the session's one run of every solution.

``executed_references`` runs each solution notebook top to bottom once per test session (as a
student would before submitting, so artifacts such as adapters exist) and builds the demo's
sample submissions; ``graded`` autogrades those samples. Both run only the assignments the
selected tests ask for (their ``assignment`` parameter), so ``pytest -k maxent_irl`` does not
train the GRPO notebooks. ``session_report`` collects tables printed at the end of the run.
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("COURSE_PROFILE", "tiny")

from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY_ENV = {"COURSE_PROFILE": "tiny", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
_REPORT: list[tuple[str, str]] = []


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    """The shipped tiny model's folder (verified against its manifest; nothing is built)."""
    from helpers import lm

    return Path(lm.resolve_model("tiny", "unused/full-model-id"))


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from helpers import lm

    return lm.load_tokenizer(str(tiny_model_dir))


@pytest.fixture()
def tiny_model(tiny_model_dir):
    from helpers import lm

    return lm.load_model(str(tiny_model_dir))


def reads_mutation_batch(item) -> bool:
    return "mutation_results" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """The tests that read the mutation batch run last: they wait for it (see ``mutation_batch``)."""
    items.sort(key=reads_mutation_batch)  # stable: every other test keeps its place


BACKGROUND_PIDS: set[int] = set()
"""Processes grading a batch in the background of this session (see ``mutation_batch``)."""


def in_background_batch(proc) -> bool:
    """Whether ``proc`` (a psutil.Process) descends from a background batch: tests that look for
    leftover sandboxed processes of their own batch skip those."""
    import psutil

    try:
        return any(parent.pid in BACKGROUND_PIDS for parent in proc.parents())
    except psutil.Error:
        return False


@pytest.fixture(scope="session", autouse=True)
def _background_batches(request):
    """Start the mutation batch before the session's first test when its tests are selected."""
    if any(reads_mutation_batch(item) for item in request.session.items):
        request.getfixturevalue("mutation_batch")


@pytest.fixture(scope="session")
def mutation_batch(request, executed_references, tmp_path_factory):
    """The mutation tests' variant submissions, grading in a process of their own from the
    session's start on (tests/test_mutations.py: ``start_batch``); stopped if the session ends first."""
    from test_mutations import selected_assignments, start_batch

    batch = start_batch(selected_assignments(request.session), executed_references,
                        tmp_path_factory.mktemp("mutations"))
    if batch.process is not None:
        BACKGROUND_PIDS.add(batch.process.pid)
    yield batch
    batch.stop()


@pytest.fixture(scope="session")
def session_report():
    """A list of (title, text); each is printed as its own section after the test summary."""
    return _REPORT


def pytest_terminal_summary(terminalreporter):
    for title, text in _REPORT:
        terminalreporter.section(title)
        terminalreporter.write(text.rstrip("\n") + "\n")


def assignments_needed(session, fixture: str) -> list:
    """The assignments (in the kit's order) that the selected tests using ``fixture`` are
    parametrized with; every assignment when one of those tests has no ``assignment``."""
    from autograder.manifest import REPO_ROOT, load_assignments

    every = load_assignments(REPO_ROOT)
    wanted: set[str] = set()
    for item in session.items:
        if fixture not in getattr(item, "fixturenames", ()):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "assignment" not in params:
            return every
        wanted.add(params["assignment"])
    return [a for a in every if a.id in wanted]


@dataclass
class References:
    """Where the session's single run of the solutions left its files."""

    course: Path
    """An nbgrader course: ``release/<id>/<id>.ipynb`` is the student release."""
    submissions: Path
    """``<student>/<id>/`` for the demo's samples: reference (executed, with artifacts), blank, buggy."""
    assignments: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    """Seconds each solution took to run top to bottom."""

    def release(self, assignment_id: str) -> Path:
        return self.course / "release" / assignment_id / f"{assignment_id}.ipynb"

    def reference_dir(self, assignment_id: str) -> Path:
        """The executed reference submission: the notebook and the artifacts it wrote."""
        return self.submissions / "reference" / assignment_id


def demo_run(needed: list) -> tuple[Path, dict] | None:
    """The demo's own run, for CI: ``.ci/run`` runs ``make demo`` (with ``--execute-all``) first
    and points ``COURSE_KIT_DEMO_OUTPUT`` at its OUT, so the suite reads those executed
    references and grades instead of producing the same ones again. Used only when that run
    covered every assignment the selected tests need and was made from the current sources
    (solutions, samples files, helpers, autograder); a stale or partial one stops the session."""
    where = os.environ.get("COURSE_KIT_DEMO_OUTPUT")
    if not where:
        return None
    import json

    from autograder.demo import DEMO_MANIFEST, sources_digest

    manifest_path = Path(where) / DEMO_MANIFEST
    if not manifest_path.exists():
        pytest.exit(f"COURSE_KIT_DEMO_OUTPUT={where} has no {DEMO_MANIFEST}: run the demo with --execute-all there", 2)
    manifest = json.loads(manifest_path.read_text())
    missing = [a.id for a in needed if a.id not in manifest["executed"]]
    if manifest["sources"] != sources_digest() or missing:
        why = f"it did not execute {', '.join(missing)}" if missing else "the sources changed since it ran"
        pytest.exit(f"COURSE_KIT_DEMO_OUTPUT={where} cannot be reused: {why}; run `make demo` again or unset it", 2)
    return Path(where), manifest


@pytest.fixture(scope="session")
def executed_references(request, tmp_path_factory, tiny_model_dir) -> References:
    """Run each needed solution notebook top to bottom (once per session) and build the samples."""
    from autograder.authoring.course import new_course
    from autograder.demo import build_samples

    # item.fixturenames is the closure, so tests that use `graded` (or any fixture built on this
    # one) count too
    needed = assignments_needed(request.session, "executed_references")
    reused = demo_run(needed)
    if reused:  # the demo's OUT holds release/<id>/<id>.ipynb (an nbgrader course) and submissions/
        out, manifest = reused
        return References(course=out, submissions=out / "submissions", assignments=needed,
                          timings={k: v for k, v in manifest["timings"].items() if k in {a.id for a in needed}})
    root = tmp_path_factory.mktemp("e2e")
    submissions = root / "submissions"
    course = new_course(needed, where=root)
    timings = build_samples(needed, course, submissions, TINY_ENV, log=lambda line: None, execute_all=True)
    return References(course=course, submissions=submissions, assignments=needed, timings=timings)


@pytest.fixture(scope="session")
def graded(executed_references, tmp_path_factory):
    """Autograde the demo's samples; return (results by (student, assignment), timings, OUT)."""
    from autograder.grading.batch import Request, autograde

    refs = executed_references
    if demo_run(refs.assignments):  # the demo graded these very samples into its OUT
        from autograder.reports.feedback import load_results

        out = refs.course
        wanted = {a.id for a in refs.assignments}
        results = load_results(out)
        return {(r.student, r.assignment): r for r in results if r.assignment in wanted}, refs.timings, out
    out = tmp_path_factory.mktemp("e2e-out")
    results = autograde(refs.submissions, out, refs.assignments, Request(workers=2, profile="tiny"))
    print("\nsolution run seconds:", {k: round(v) for k, v in refs.timings.items()})
    return {(r.student, r.assignment): r for r in results}, refs.timings, out
