"""The assignments this kit ships and what grading each one needs."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
KNOWN_ORDER = ("maxent_irl", "grpo_format", "tiny_grpo", "math_grpo")
# Defaults where autograder/samples/<id>.json says nothing: GPU need in the full profile, and the
# memory limit of the grading kernel (MiB).
GPU_IN_FULL = {"grpo_format", "math_grpo"}
MEMORY_MB = {"maxent_irl": 3072}
# per-cell timeouts (s): IRL cells take seconds, GRPO training/evaluation cells minutes
TIMEOUTS = {"maxent_irl": 120, "grpo_format": 1800, "tiny_grpo": 900, "math_grpo": 1800}
DEFAULT_MEMORY_MB = 12288


@dataclass
class Assignment:
    id: str
    source: Path
    """The solution notebook (nbgrader source)."""
    timeout: int = 120
    """Per-cell timeout in seconds while autograding."""
    wall_timeout: int = 1800
    """Whole-notebook limit in seconds; past it the kernel is killed and earned points kept."""
    needs_gpu_in_full: bool = False
    memory_mb: int = DEFAULT_MEMORY_MB
    """Memory limit of the grading kernel; past it the cell fails (or the kernel is killed)."""
    artifacts: list[str] = field(default_factory=list)
    """Paths (relative to the notebook) the student submits beside the notebook."""
    samples: dict = field(default_factory=dict)
    """The demo's buggy patch and expected scores, from autograder/samples/<id>.json."""


def load_assignments(root: Path = REPO_ROOT, only: list[str] | None = None) -> list[Assignment]:
    solutions = root / "solutions"
    found = sorted(p.name for p in solutions.iterdir() if (p / f"{p.name}.ipynb").exists()) if solutions.exists() else []
    order = {name: i for i, name in enumerate(KNOWN_ORDER)}
    found.sort(key=lambda name: (order.get(name, len(order)), name))
    if only:
        unknown = [name for name in only if name not in found]
        if unknown:
            raise SystemExit(
                f"error: unknown assignment(s) {', '.join(unknown)}; "
                f"available: {', '.join(found) or '(none under ' + str(solutions) + ')'}"
            )
        found = [name for name in found if name in only]
    assignments = []
    for name in found:
        sample_file = SAMPLES_DIR / f"{name}.json"
        if not sample_file.exists():
            sample_file = root / "solutions" / name / "samples.json"
        data = json.loads(sample_file.read_text()) if sample_file.exists() else {}
        assignments.append(
            Assignment(
                id=name,
                source=solutions / name / f"{name}.ipynb",
                timeout=int(data.get("timeout", TIMEOUTS.get(name, 120))),
                wall_timeout=int(data.get("wall_timeout", 1800)),
                needs_gpu_in_full=bool(data.get("needs_gpu_in_full", name in GPU_IN_FULL)),
                memory_mb=int(data.get("memory_mb", MEMORY_MB.get(name, DEFAULT_MEMORY_MB))),
                artifacts=list(data.get("artifacts", [])),
                samples=data,
            )
        )
    return assignments
