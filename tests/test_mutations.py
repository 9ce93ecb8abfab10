"""Mutation tests for the hidden tests: every variant scores what its manifest declares.

``solutions/<id>/manifest.json`` may list ``variants``: plausible implementations of answer
cells, each built from the reference answers by ``patches`` (``{"grade_id", "old", "new"}``,
``old`` occurring once in that solution cell) and/or ``replace`` (``{grade_id: whole new
source}``)::

    {"name": "p0_divide_by_max", "kind": "wrong" | "allowed", "description": "...",
     "patches": [...], "replace": {...}, "expected": {"test_initial_probabilities": 0}}

``expected`` gives the points of every test cell the variant affects (downstream cells too);
test cells it does not list must earn full points. An ``allowed`` variant is an
implementation the docstring permits, so it must earn full points everywhere (empty
``expected``); a ``wrong`` one must lose points somewhere.

Every autograded answer cell (an answer code cell before the assignment's last test cell,
unless ``ungraded_answers`` in the manifest names it with a reason) needs at least two
wrong variants and one allowed variant.

To keep the suite fast, variants share submissions: one submission holds variants of one kind
that touch disjoint answer cells and lose points in disjoint test cells, so every test cell's
expected points come from at most one variant (the minimum over the group; unlisted cells
full) and a wrong score names its variant. Allowed variants never share a submission with
wrong ones, so each allowed one is seen earning full marks on every cell. Each submission is
the release filled with the reference answers plus the group's variants, beside a copy of the
executed reference's artifacts (adapters) so grading-mode cells work; all submissions of the
selected assignments are graded in one batch (tiny profile, two workers), in a low-priority
process of its own that runs beside the rest of the suite (see ``start_batch``), and a table of
variants and points is printed at the end of the run.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from autograder.manifest import REPO_ROOT, Patch, Variant, load_assignments

ASSIGNMENTS = load_assignments(REPO_ROOT)
WITH_VARIANTS = [a for a in ASSIGNMENTS if a.variants]
IDS = [a.id for a in WITH_VARIANTS]
KINDS = ("wrong", "allowed")
NAME = re.compile(r"[a-z0-9_]+")


# --- reading the notebooks and the samples files ------------------------------------------

@dataclass
class Cells:
    answers: dict[str, str]
    """grade_id -> solution source of every answer code cell, in notebook order."""
    tests: dict[str, float]
    """grade_id -> points of every autograded test cell, in notebook order."""
    autograded: list[str]
    """Answer cells that need variants: before the last test cell and not declared ungraded."""


def notebook_cells(assignment) -> Cells:
    notebook = nbformat.read(assignment.source, as_version=4)
    answers, tests, order = {}, {}, []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or "grade_id" not in meta:
            continue
        if meta.get("solution") and not meta.get("grade"):
            answers[meta["grade_id"]] = cell.source
            order.append(("answer", meta["grade_id"]))
        elif meta.get("grade") and not meta.get("solution"):
            tests[meta["grade_id"]] = float(meta.get("points", 0))
            order.append(("test", meta["grade_id"]))
    last_test = max((i for i, (kind, _) in enumerate(order) if kind == "test"), default=-1)
    exempt = assignment.ungraded_answers
    autograded = [gid for i, (kind, gid) in enumerate(order)
                  if kind == "answer" and i < last_test and gid not in exempt]
    return Cells(answers, tests, autograded)


def cells_of(variant) -> frozenset:
    """The answer cells a variant changes."""
    return frozenset([p.grade_id for p in variant.patches] + list(variant.replace))


def points_of(variant, tests: dict[str, float]) -> dict[str, float]:
    """Expected points of every test cell (unlisted cells: full)."""
    return {gid: float(variant.expected.get(gid, full)) for gid, full in tests.items()}


def lost_by(variant, tests: dict[str, float]) -> frozenset:
    return frozenset(gid for gid, pts in points_of(variant, tests).items() if pts < tests[gid])


def variant_problems(assignment, cells: Cells) -> list[str]:
    """What the manifest's types cannot say about its variants, one line each (empty: well formed)."""
    where = f"{assignment.manifest.relative_to(REPO_ROOT)}"
    problems = []
    for gid in assignment.ungraded_answers:
        if gid not in cells.answers:
            problems.append(f"{where}: ungraded_answers names {gid!r}, which is not an answer cell")
    seen = set()
    for variant in assignment.variants:
        label = f"{where}: variant {variant.name}"
        if not NAME.fullmatch(variant.name):
            problems.append(f"{label}: `name` must match [a-z0-9_]+")
        elif variant.name in seen:
            problems.append(f"{label}: the name is used twice")
        seen.add(variant.name)
        if not variant.description.strip():
            problems.append(f"{label}: give a `description` of the change")
        if not variant.patches and not variant.replace:
            problems.append(f"{label}: needs `patches` or `replace`")
        sources = dict(cells.answers)
        for gid, source in variant.replace.items():
            if gid not in cells.answers:
                problems.append(f"{label}: replaces {gid!r}, which is not an answer cell "
                                f"(answer cells: {', '.join(cells.answers)})")
            else:
                sources[gid] = source
        for patch in variant.patches:
            if patch.grade_id not in sources:
                problems.append(f"{label}: patches {patch.grade_id!r}, which is not an answer cell")
            elif sources[patch.grade_id].count(patch.old) != 1:
                problems.append(f"{label}: the patch's `old` text occurs {sources[patch.grade_id].count(patch.old)} "
                                f"times in cell {patch.grade_id!r}; it must occur exactly once")
            elif patch.old == patch.new:
                problems.append(f"{label}: a patch of {patch.grade_id!r} changes nothing")
            else:
                sources[patch.grade_id] = sources[patch.grade_id].replace(patch.old, patch.new)
        for gid, pts in variant.expected.items():
            if gid not in cells.tests:
                problems.append(f"{label}: expected names {gid!r}, which is not a test cell "
                                f"(test cells: {', '.join(cells.tests)})")
            elif not 0 <= pts <= cells.tests[gid]:
                problems.append(f"{label}: expected points of {gid!r} must be a number from 0 to {cells.tests[gid]:g}")
        short = [gid for gid, pts in variant.expected.items() if gid in cells.tests and pts < cells.tests[gid]]
        if variant.kind == "allowed" and short:
            problems.append(f"{label}: an allowed variant must earn full points, but expects less on {short}")
        if variant.kind == "wrong" and not short:
            problems.append(f"{label}: a wrong variant must lose points somewhere: "
                            "list the cells it fails in `expected`")
    return problems


def load_variants(assignment, cells: Cells) -> list:
    problems = variant_problems(assignment, cells)
    if problems:
        raise ValueError("\n".join(problems))
    return list(assignment.variants)


def coverage_problems(assignment, cells: Cells, variants: list[Variant]) -> list[str]:
    problems = []
    for gid in cells.autograded:
        wrong = [v.name for v in variants if gid in cells_of(v) and v.kind == "wrong"]
        allowed = [v.name for v in variants if gid in cells_of(v) and v.kind == "allowed"]
        if len(wrong) < 2 or not allowed:
            problems.append(
                f"{assignment.id}: answer cell {gid!r} has {len(wrong)} wrong and {len(allowed)} allowed variant(s); "
                f"add variants to solutions/{assignment.id}/manifest.json until it has at least 2 wrong and 1 allowed "
                "(or, if no test grades it, list it under `ungraded_answers` with the reason)")
    return problems


def plan_submissions(variants: list, tests: dict[str, float]) -> list[list]:
    """Greedy first-fit: a variant joins the first group of its kind whose variants touch other
    answer cells and lose points in other test cells than it does."""
    groups: list[list] = []
    for kind in KINDS:
        of_kind: list[list] = []
        for variant in (v for v in variants if v.kind == kind):
            for group in of_kind:
                if all(not (cells_of(variant) & cells_of(other))
                       and not (lost_by(variant, tests) & lost_by(other, tests))
                       for other in group):
                    group.append(variant)
                    break
            else:
                of_kind.append([variant])
        groups += of_kind
    return groups


def group_points(group: list, tests: dict[str, float]) -> dict[str, float]:
    """Expected points per test cell of a submission holding ``group``: the minimum over its variants."""
    return {gid: min(points_of(v, tests)[gid] for v in group) for gid in tests}


# --- the batch ------------------------------------------------------------------------------

@dataclass
class Submission:
    student: str
    assignment: str
    variants: list
    expected: dict
    result: object = None


# The batch grades in a process of its own, started by conftest's ``mutation_batch`` before the
# session's first test and read by the tests below, which conftest moves to the end of the run.
# It runs at the lowest CPU priority (nice 19), so it takes only what the rest of the suite leaves
# idle (a quarter of two cores: single-process tests, one-worker batches) and the tests beside it
# keep their pace; once they are done it has both cores. A process, not a thread, so the
# environment it grades with is the session's, whatever a test monkeypatches.
BATCH_WORKERS = 2
BATCH_NICENESS = 19
_GRADE = """
import json, sys, time
from pathlib import Path
from autograder.grading.batch import Request, autograde
from autograder.manifest import REPO_ROOT, load_assignments
started = time.perf_counter()
subs, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
# scores are what the tests read: no nbgrader feedback pages (1-4 s each; test_notebooks checks them)
request = Request(workers=workers, profile="tiny", feedback_pages=False)
autograde(subs, out, load_assignments(REPO_ROOT, sys.argv[4:]), request)
(out / "batch.json").write_text(json.dumps({"seconds": time.perf_counter() - started}))
"""


@dataclass
class Batch:
    submissions: list = field(default_factory=list)
    seconds: float = 0.0
    problems: dict = field(default_factory=dict)
    """assignment -> why its variants could not be built."""
    error: str = ""
    """Why the grading process failed (the end of its log), if it did."""
    process: object = None
    root: Path | None = None

    def wait(self) -> Batch:
        """Wait for the grading process (once) and attach each submission's result."""
        from autograder.reports.feedback import load_results

        if self.process is None:
            return self
        code, self.process = self.process.wait(), None
        log = (self.root / "batch.log").read_text(errors="replace")
        summary = self.root / "out" / "batch.json"
        if code != 0 or not summary.exists():
            self.error = f"the grading process exited with {code}:\n{log[-3000:]}"
            return self
        self.seconds = json.loads(summary.read_text())["seconds"]
        by_key = {(r.student, r.assignment): r for r in load_results(self.root / "out")}
        for submission in self.submissions:
            submission.result = by_key.get((submission.student, submission.assignment))
        return self

    def stop(self) -> None:
        """End the grading process and its kernels (a session that ends before reading the batch)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def build_submission(refs, assignment, group: list, folder: Path) -> None:
    from autograder.authoring.course import fill_release

    shutil.copytree(refs.reference_dir(assignment.id), folder)  # executed notebook + artifacts
    patches = [p for v in group for p in v.patches]
    replace = {gid: source for v in group for gid, source in v.replace.items()}
    fill_release(refs.release(assignment.id), assignment.source, folder / f"{assignment.id}.ipynb",
                 patches=patches, replace=replace)


def selected_assignments(session) -> list:
    """The assignments whose mutation tests this session runs (none: no batch)."""
    from conftest import reads_mutation_batch

    wanted = set()
    for item in session.items:
        if reads_mutation_batch(item):
            params = getattr(getattr(item, "callspec", None), "params", {})
            wanted.add(params.get("assignment"))
    return [a for a in WITH_VARIANTS if a.id in wanted or None in wanted]


def start_batch(assignments: list, refs, root: Path) -> Batch:
    """Build every variant submission of ``assignments`` under ``root`` and start grading them
    (tiny profile, :data:`BATCH_WORKERS`, :data:`BATCH_NICENESS`) in a new process group;
    :meth:`Batch.wait` collects."""
    batch, graded = Batch(root=root), []
    for assignment in assignments:
        cells = notebook_cells(assignment)
        try:
            variants = load_variants(assignment, cells)
        except ValueError as error:
            batch.problems[assignment.id] = str(error)
            continue
        for number, group in enumerate(plan_submissions(variants, cells.tests), start=1):
            student = f"mut_{group[0].kind}_{number}"
            build_submission(refs, assignment, group, root / "submissions" / student / assignment.id)
            batch.submissions.append(Submission(student, assignment.id, group, group_points(group, cells.tests)))
        graded.append(assignment.id)
    if graded:
        with open(root / "batch.log", "wb") as log:
            batch.process = subprocess.Popen(
                [sys.executable, "-c", _GRADE, str(root / "submissions"), str(root / "out"), str(BATCH_WORKERS),
                 *graded], cwd=REPO_ROOT, env=dict(os.environ), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=lambda: os.nice(BATCH_NICENESS))
    return batch


@pytest.fixture(scope="module")
def mutation_results(mutation_batch, session_report) -> Batch:
    batch = mutation_batch.wait()
    session_report.append(("mutation tests: variants and points", score_table(batch)))
    return batch


def _got(submission: Submission, gid: str):
    cell = (submission.result.cells or {}).get(gid) if submission.result else None
    return None if cell is None else float(cell[0])


def score_table(batch: Batch) -> str:
    """assignment | variant | kind | cell | expected | got, then the cost of the batch."""
    header = ("assignment", "variant", "kind", "cell", "expected", "got", "submission")
    rows = []
    for sub in batch.submissions:
        tests = notebook_cells(next(a for a in WITH_VARIANTS if a.id == sub.assignment)).tests
        lost_by_group = set().union(*(lost_by(v, tests) for v in sub.variants))
        for v in sub.variants:
            for gid in sorted(lost_by(v, tests), key=list(tests).index):
                got = _got(sub, gid)
                rows.append((sub.assignment, v.name, v.kind, gid, f"{points_of(v, tests)[gid]:g}/{tests[gid]:g}",
                             "-" if got is None else f"{got:g}", sub.student))
        # the cells no variant of this submission affects: every one must earn full points
        others = [gid for gid in tests if gid not in lost_by_group]
        want = sum(tests[gid] for gid in others)
        got_values = [_got(sub, gid) for gid in others]
        got = "-" if None in got_values else f"{sum(got_values):g}"
        if lost_by_group:
            who = sub.variants[0].name if len(sub.variants) == 1 else f"({len(sub.variants)} variants above)"
            rows.append((sub.assignment, who, sub.variants[0].kind, "(all other test cells)", f"{want:g}/{want:g}",
                         got, sub.student))
        else:
            rows += [(sub.assignment, v.name, v.kind, "(every test cell)", f"{want:g}/{want:g}", got, sub.student)
                     for v in sub.variants]
    rows = [header] + rows
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    per = [s.result.seconds for s in batch.submissions if s.result is not None]
    counts = {}
    for s in batch.submissions:
        counts[s.assignment] = counts.get(s.assignment, 0) + 1
    lines.append("")
    if batch.error:
        lines.append(batch.error.splitlines()[0])
    lines.append(f"{sum(len(s.variants) for s in batch.submissions)} variants in {len(batch.submissions)} submissions "
                 f"({', '.join(f'{k}: {n}' for k, n in counts.items())}), graded in one batch in {batch.seconds:.0f} s "
                 f"({BATCH_WORKERS} workers at nice {BATCH_NICENESS}, beside the rest of the suite; "
                 f"per submission {min(per, default=0):.0f}-{max(per, default=0):.0f} s)")
    for assignment_id, problem in batch.problems.items():
        lines.append(f"{assignment_id}: variants not built: {problem.splitlines()[0]}")
    return "\n".join(lines)


# --- the tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("assignment", IDS)
def test_variants_are_well_formed(assignment):
    spec = next(a for a in WITH_VARIANTS if a.id == assignment)
    problems = variant_problems(spec, notebook_cells(spec))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", IDS)
def test_every_autograded_answer_has_wrong_and_allowed_variants(assignment):
    spec = next(a for a in WITH_VARIANTS if a.id == assignment)
    cells = notebook_cells(spec)
    problems = coverage_problems(spec, cells, load_variants(spec, cells))
    assert not problems, "\n".join(problems)


def test_plan_keeps_each_cell_to_one_variant():
    """Grouping: disjoint answer cells and disjoint lost test cells; allowed never with wrong."""
    tests = {"t1": 4.0, "t2": 4.0, "t3": 6.0}

    def v(name, kind, cells, lost):
        return Variant(name, kind, "d", patches=tuple(Patch(c, "a", "b") for c in cells), replace={},
                       expected={t: 0.0 for t in lost})

    variants = [v("w1", "wrong", ["a"], ["t1"]), v("w2", "wrong", ["b"], ["t2"]), v("w3", "wrong", ["a"], ["t1"]),
                v("w4", "wrong", ["c"], ["t1", "t3"]), v("ok1", "allowed", ["a"], []), v("ok2", "allowed", ["b"], [])]
    groups = [[x.name for x in g] for g in plan_submissions(variants, tests)]
    assert groups == [["w1", "w2"], ["w3"], ["w4"], ["ok1", "ok2"]]
    assert group_points(plan_submissions(variants, tests)[0], tests) == {"t1": 0.0, "t2": 0.0, "t3": 6.0}


@pytest.mark.slow
@pytest.mark.parametrize("assignment", IDS)
def test_variants_score_as_declared(mutation_results, assignment):
    assert not mutation_results.error, mutation_results.error
    assert assignment not in mutation_results.problems, mutation_results.problems.get(assignment)
    spec = next(a for a in WITH_VARIANTS if a.id == assignment)
    tests = notebook_cells(spec).tests
    failures = []
    for sub in (s for s in mutation_results.submissions if s.assignment == assignment):
        names = ", ".join(v.name for v in sub.variants)
        if sub.result is None:
            failures.append(f"submission {sub.student} ({names}) was not graded")
            continue
        if sub.result.status not in ("ok", "failed-tests"):
            failures.append(f"submission {sub.student} ({names}) ended with status {sub.result.status}: "
                            f"{'; '.join(sub.result.feedback)[:400]}")
        for gid, want in sub.expected.items():
            got = _got(sub, gid)
            if got is not None and abs(got - want) < 1e-9:
                continue
            owners = [v for v in sub.variants if gid in lost_by(v, tests)]
            who = (f"variant {owners[0].name!r} ({owners[0].kind}: {owners[0].description})" if owners else
                   f"no variant lists it, so it must earn full points with {names}")
            why = sub.result.cell_messages.get(gid, "")
            failures.append(f"{assignment} / {gid}: expected {want:g}, got {'nothing' if got is None else f'{got:g}'} "
                            f"- {who}" + (f"; the check said: {why}" if why else ""))
    assert not failures, "\n".join(failures)
