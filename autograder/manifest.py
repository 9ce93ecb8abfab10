"""One typed manifest per assignment: ``solutions/<id>/manifest.json``, beside its solution notebook.

Everything the grader, the demo, the tests and the docs need to know about an assignment that
is not in the notebook itself lives there, once: time, memory and disk limits, whether a GPU is
needed in each profile, the artifacts students submit and the rules their adapters must obey,
the grader-side evaluator and its tiers per profile, the demo's samples and the robustness
targets. The calibration variants (mutation tests) are files of their own beside it
(``variants/``, read by ``autograder.variants``). :func:`load_assignments` reads each
manifest into the frozen dataclasses below; a missing, unknown or mistyped field stops everything
up front with one line naming the file and the field (:class:`ManifestError`).

What students may see of it (tiers, limits, artifacts) is written by ``python -m autograder
generate`` into ``helpers/data/grading.json`` (:func:`public_settings`), which the student wheel
ships and the notebooks read; ``generate --check`` fails when that file is stale.
"""
from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from pathlib import Path

from autograder import points
from autograder.variants import Patch, Variant, VariantError, load_variants
from helpers.profiles import PROFILES

REPO_ROOT = Path(__file__).resolve().parents[1]
MANIFEST_NAME = "manifest.json"
HIDDEN_TESTS = "hidden_tests"
"""A course folder's copy of each assignment's hidden tests: ``<course>/hidden_tests/<id>/`` (never released)."""
PUBLIC_SETTINGS = REPO_ROOT / "helpers" / "data" / "grading.json"


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Limits:
    cell_timeout_s: int
    """Per-cell time limit while autograding (nbgrader's ``Execute.timeout``)."""
    notebook_timeout_s: int
    """Whole-notebook limit: past it the kernel is stopped; points earned before are kept."""
    memory_mb: int
    """Memory limit of the grading kernel."""
    disk_mb: int
    """Size of the kernel's only writable filesystem (``/tmp``, its home and work folder)."""
    max_submission_mb: int
    """Largest upload that is graded, archives expanded; more is refused with a feedback line."""


@dataclass(frozen=True)
class AdapterRules:
    """What a submitted LoRA adapter may ask of peft, checked before peft reads it."""

    max_rank: int
    """Largest LoRA rank ``r`` accepted."""
    target_modules: tuple[str, ...]
    """Module names the notebook trains; an adapter may target these and nothing else."""
    max_mb: int
    """Largest ``adapter_model.safetensors`` accepted."""


@dataclass(frozen=True)
class EvaluatorSpec:
    """A grader-side measurement of a submitted artifact (see ``autograder/evaluators``)."""

    name: str
    """Key in ``autograder.evaluators.REGISTRY``."""
    artifact: str
    """Folder of the submission (relative to the notebook) that is measured."""
    tiers: Mapping[str, Mapping[str, float]]
    """profile -> {tier cell grade_id: threshold in [0, 1]}."""
    timeout_s: int
    """Longest one measurement may take."""
    memory_mb: int
    """Memory limit of the evaluator process."""


@dataclass(frozen=True)
class Demo:
    """The demo's three samples: the reference, a blank copy and one buggy copy."""

    buggy_description: str
    buggy_patches: tuple[Patch, ...]
    expected: Mapping[str, float]
    """``blank`` and ``buggy`` -> autograded points each must score; ``reference`` is added, the sum of the hidden
    tests' ``POINTS``."""


@dataclass(frozen=True)
class Robustness:
    """Targets of ``make test-robustness`` (the reference training under seeds 1-3)."""

    until: str
    """grade_id of the last cell to run."""
    metrics: str
    """JSON file (relative to the notebook) the targets are read from."""
    checks: Mapping[str, tuple[str, float]]
    """dotted key in that file -> (``>=`` or ``<=``, bound)."""
    train_cell: str = ""
    """grade_id of the cell that trains (``python -m autograder calibrate`` times its steps)."""


@dataclass(frozen=True)
class Assignment:
    """One assignment. Only ``limits`` and ``demo`` must be written; ``python -m autograder new ID``
    writes a manifest with them, and every other field says what its default means."""

    id: str
    """The assignment id: the folder and notebook name under ``solutions/``."""
    source: Path
    """The solution notebook (nbgrader source)."""
    manifest: Path
    """This manifest's file."""
    limits: Limits
    demo: Demo
    variants: tuple[Variant, ...]
    """Calibration variants, one file each in ``solutions/<id>/variants/`` (``authoring.variants``)."""
    order: int = 100
    """Where the assignment comes in the course (lower first; ties by id): releases, the demo, reports."""
    needs_gpu: Mapping[str, bool] = field(default_factory=lambda: {"tiny": False, "full": False})
    """profile -> whether grading (and the notebook) needs a CUDA GPU there; the profiles listed are the ones the
    assignment runs in (a notebook started in another one stops with a line naming them). The default leaves
    out ``small``: an assignment opts in once its recipe has been calibrated on the real model."""
    artifacts: tuple[str, ...] = ()
    """Folders (relative to the notebook) students submit beside it."""
    adapters: AdapterRules | None = None
    """Rules for the submitted LoRA adapters; None when the assignment has none."""
    uses_tiny_model: bool = False
    """Grading loads the shipped tiny model (checked once before a batch)."""
    evaluator: EvaluatorSpec | None = None
    needs_real_weights: tuple[str, ...] = ()
    """Test cells that only pass with trained real weights (the GPU smoke run expects them to fail)."""
    ungraded_answers: Mapping[str, str] = field(default_factory=dict)
    """Answer cells no test grades -> why (the mutation tests need no variant for them)."""
    robustness: Robustness | None = None
    partial_credit: tuple[str, ...] = ()
    """Test cells scored by the fraction of their checks that pass (the others: all or nothing)."""
    pack_mb: int = 100
    """Largest zip ``helpers.submission.pack`` makes (contents, uncompressed, in MB): the LMS's upload
    limit, which is smaller than what the grader accepts (``limits.max_submission_mb``)."""
    export_limit: int | None = None
    """Characters of the notebook's Markdown export when it is graded on that export (``helpers.submission``
    checks it before packing); None: graded on its cells, no limit."""

    @property
    def tests_dir(self) -> Path:
        """The hidden tests, one file per graded test cell (``autograder.hidden_test_files``)."""
        return self.source.parent / "tests"

    def gpu_needed(self, profile: str) -> bool:
        return bool(self.needs_gpu.get(profile, False))

    def runs_in(self, profile: str) -> bool:
        return profile in self.needs_gpu


# ----------------------------------------------------------------------------------------------
# reading and checking
# ----------------------------------------------------------------------------------------------

DERIVED = {"id", "source", "manifest", "variants"}


def _type_name(hint) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _convert(hint, value, where: str):
    """``value`` as ``hint`` (a dataclass, tuple, Mapping, Optional, str, int, float, bool)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None:
            return None
        return _convert(options[0], value, where)
    if is_dataclass(hint):
        if not isinstance(value, dict):
            raise ManifestError(f"{where}: expected an object, got {type(value).__name__}")
        return _build(hint, value, where)
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list):
            raise ManifestError(f"{where}: expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ManifestError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if origin in (Mapping, dict):
        key_type, value_type = typing.get_args(hint)
        if not isinstance(value, dict):
            raise ManifestError(f"{where}: expected an object, got {type(value).__name__}")
        # a plain dict, not a MappingProxyType: assignments travel to Ray workers by pickle
        return {_convert(key_type, k, f"{where}"): _convert(value_type, v, f"{where}.{k}") for k, v in value.items()}
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ManifestError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ManifestError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint in (str, bool):
        if not isinstance(value, hint):
            raise ManifestError(f"{where}: expected {_type_name(hint)}, got {value!r}")
        return value
    raise ManifestError(f"{where}: unsupported type {_type_name(hint)}")  # a bug in this module


def _build(cls, data: dict, where: str, skip: set = frozenset(), extra: dict | None = None):
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields(cls) if f.name not in skip]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ManifestError(f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(names)})")
    values = dict(extra or {})
    for f in fields(cls):
        if f.name in skip:
            continue
        if f.name not in data:
            if f.default is not MISSING or f.default_factory is not MISSING:
                continue
            raise ManifestError(f"{where}: missing field {f.name!r}")
        values[f.name] = _convert(hints[f.name], data[f.name], f"{where}.{f.name}" if where else f.name)
    return cls(**values)


def _check(assignment: Assignment, where: str) -> None:
    """What types alone cannot say."""
    for profile in assignment.needs_gpu:
        if profile not in PROFILES:
            raise ManifestError(f"{where}: needs_gpu.{profile}: unknown profile (profiles: {', '.join(PROFILES)})")
    if assignment.evaluator is not None:
        for profile in assignment.needs_gpu:
            if profile not in assignment.evaluator.tiers:
                raise ManifestError(f"{where}: evaluator.tiers: no thresholds for the {profile} profile")
            for grade_id, threshold in assignment.evaluator.tiers[profile].items():
                if not 0.0 <= threshold <= 1.0:
                    raise ManifestError(f"{where}: evaluator.tiers.{profile}.{grade_id}: {threshold} is not in [0, 1]")
    for variant in assignment.variants:
        if variant.kind not in ("wrong", "allowed"):
            raise ManifestError(f"{where}: variants.{variant.name}.kind: {variant.kind!r} is not wrong or allowed")
    for key in ("blank", "buggy") if assignment.demo.buggy_patches else ("blank",):
        if key not in assignment.demo.expected:
            raise ManifestError(f"{where}: demo.expected: missing field {key!r}")
    for key, (op, _bound) in (assignment.robustness.checks.items() if assignment.robustness else []):
        if op not in (">=", "<="):
            raise ManifestError(f"{where}: robustness.checks.{key}: {op!r} is not >= or <=")


def load_manifest(path: Path, assignment_id: str, source: Path) -> Assignment:
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ManifestError(f"{where}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        raise ManifestError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: expected a JSON object")
    if "variants" in data:
        raise ManifestError(f"{where}: variants: they are files now, one per variant in "
                            f"{Path(source).parent / 'variants'}/ (docs/AUTHORING.md shows the format)")
    try:
        variants = load_variants(Path(source).parent / "variants")
        assignment = _build(Assignment, data, "", skip=DERIVED,
                            extra={"id": assignment_id, "source": source, "manifest": Path(path), "variants": variants})
    except ManifestError as error:
        raise ManifestError(f"{where}: {str(error).lstrip(': ')}") from None
    except VariantError as error:
        raise ManifestError(str(error)) from None
    _check(assignment, where)
    return _with_reference_points(assignment, where)


def _with_reference_points(assignment: Assignment, where: str) -> Assignment:
    """``demo.expected.reference`` is the sum of the hidden tests' ``POINTS`` (``autograder.points``)."""
    try:
        reference = points.total(assignment.tests_dir)
    except points.PointsError as error:
        raise ManifestError(str(error)) from None
    written = assignment.demo.expected.get("reference")
    if written is not None and written != reference:
        raise ManifestError(f"{where}: demo.expected.reference is {written:g} but the hidden tests' POINTS add up to "
                            f"{reference}; remove it (it is derived from them)")
    demo = replace(assignment.demo, expected={**assignment.demo.expected, "reference": reference})
    return replace(assignment, demo=demo)


def load_assignments(root: Path = REPO_ROOT, only: list[str] | None = None) -> list[Assignment]:
    """Every assignment under ``root/solutions`` (the kit's order first), or those in ``only``."""
    solutions = Path(root) / "solutions"
    found = (sorted(p.name for p in solutions.iterdir() if (p / f"{p.name}.ipynb").exists())
             if solutions.exists() else [])
    found.sort(key=lambda name: (_declared_order(solutions / name / MANIFEST_NAME), name))
    if only:
        unknown = [name for name in only if name not in found]
        if unknown:
            raise ManifestError(f"unknown assignment(s) {', '.join(unknown)}; "
                                f"available: {', '.join(found) or '(none under ' + str(solutions) + ')'}")
        found = [name for name in found if name in only]
    return [load_manifest(solutions / name / MANIFEST_NAME, name, solutions / name / f"{name}.ipynb")
            for name in found]


def _declared_order(path: Path) -> int:
    """The manifest's ``order`` before it is checked (a broken manifest sorts last; loading it says why)."""
    try:
        order = json.loads(path.read_text(encoding="utf-8")).get("order", 100)
    except (OSError, ValueError, AttributeError):
        return 1 << 30
    return order if isinstance(order, int) and not isinstance(order, bool) else 1 << 30


# ----------------------------------------------------------------------------------------------
# what students may see: helpers/data/grading.json
# ----------------------------------------------------------------------------------------------

def public_settings(assignments: list[Assignment]) -> dict:
    """The part of each manifest a student may see (the student wheel ships it)."""
    out = {}
    for a in assignments:
        out[a.id] = {
            "artifacts": list(a.artifacts),
            "needs_gpu": dict(a.needs_gpu),
            "cell_timeout_s": a.limits.cell_timeout_s,
            "notebook_timeout_s": a.limits.notebook_timeout_s,
            "max_submission_mb": a.limits.max_submission_mb,
            "tiers": {p: dict(t) for p, t in a.evaluator.tiers.items()} if a.evaluator else {},
            "export_limit": a.export_limit,
            "pack_mb": a.pack_mb,
        }
    return out


def render_public_settings(assignments: list[Assignment]) -> str:
    return json.dumps(public_settings(assignments), indent=1, sort_keys=True) + "\n"
