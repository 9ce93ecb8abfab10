"""Shared fixtures: offline flags and the shipped tiny model."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("COURSE_PROFILE", "tiny")

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


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
