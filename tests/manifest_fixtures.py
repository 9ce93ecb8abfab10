"""Manifests for the small courses tests build (every field present, overridable by keyword)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

DEFAULTS = {
    "limits": {"cell_timeout_s": 60, "notebook_timeout_s": 600, "memory_mb": 3072, "disk_mb": 256,
               "max_submission_mb": 64},
    "needs_gpu": {"tiny": False, "full": False},
    "artifacts": [],
    "adapters": None,
    "uses_tiny_model": False,
    "evaluator": None,
    "needs_real_weights": [],
    "ungraded_answers": {},
    "demo": {"buggy_description": "", "buggy_patches": [], "expected": {"blank": 0, "buggy": 0}},
    "robustness": None,
}


def manifest(**overrides) -> dict:
    """DEFAULTS with ``overrides`` applied; a dict value updates a dict field key by key."""
    data = copy.deepcopy(DEFAULTS)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict) and key not in ("evaluator",):
            data[key].update(value)
        else:
            data[key] = value
    return data


def write_manifest(folder: Path, **overrides) -> Path:
    path = Path(folder) / "manifest.json"
    path.write_text(json.dumps(manifest(**overrides), indent=1))
    return path
