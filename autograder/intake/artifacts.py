"""The artifacts a submission declares (LoRA adapters), checked before anything loads them.

For each artifact the manifest lists: missing, not a saved adapter, or refused by the adapter
rules (``autograder.evaluators.adapters``: plain LoRA, rank cap, target modules, safetensors,
finite values, size). A refused adapter is removed from the submission's copy before the kernel
starts, so no test in the notebook loads it either; its tests score 0 and one feedback line says
which rule it broke. An adapter trained in the other profile than the one grading runs in is
flagged (status ``wrong-profile``; its tier cells score 0).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from autograder.evaluators.adapters import AdapterRefused, check
from autograder.manifest import PROFILES, Assignment

ADAPTER_MANIFEST = "course_kit_adapter.json"


def _trained_profile(folder: Path) -> tuple[str | None, str]:
    """(profile the adapter was trained in, its base model) from the kit's adapter manifest."""
    try:
        data = json.loads((folder / ADAPTER_MANIFEST).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None, ""
    if not isinstance(data, dict):
        return None, ""
    model = str(data.get("base_model", ""))
    profile = data.get("profile")
    if profile not in PROFILES and model:
        profile = "tiny" if model.startswith("course-kit/") else "small" if "@gguf-sha256:" in model else "full"
    return profile, model


def check_artifacts(folder: Path, assignment: Assignment, profile: str | None = None) -> tuple[list[str], str | None]:
    """(feedback lines, wrong-profile line or None) for the declared artifacts of the submission in
    ``folder``; refused adapters are deleted from ``folder`` (a private copy)."""
    notes, mismatch = [], None
    for relative in assignment.artifacts:
        path = folder / relative
        if not path.exists():
            notes.append(f"artifact {relative} is missing: tests that evaluate it score 0")
            continue
        if assignment.adapters is None or not path.is_dir():
            continue
        try:
            check(path, assignment.adapters)
        except AdapterRefused as error:
            shutil.rmtree(path, ignore_errors=True)
            notes.append(f"artifact {relative} was refused and not used: {error}")
            continue
        trained, model = _trained_profile(path)
        if profile and trained in PROFILES and trained != profile and mismatch is None:
            mismatch = (f"artifact {relative} was trained in the {trained} profile (base model {model!r}) but is "
                        f"graded in the {profile} profile: the checks that load it cannot use it, and its tier "
                        "points are not given. "
                        + ("Train it again on a GPU runtime (full profile) and resubmit."
                           if profile == "full" else
                           f"Grade with --profile {trained}, or train it again in the {profile} profile."))
    return notes, mismatch
