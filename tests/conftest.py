"""Shared fixtures: offline flags, the tiny model (built once per session), a scratch cache."""
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
    from helpers import lm

    return lm.build_tiny_model(progress=False)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from helpers import lm

    return lm.load_tokenizer(str(tiny_model_dir))


@pytest.fixture()
def tiny_model(tiny_model_dir):
    from helpers import lm

    return lm.load_model(str(tiny_model_dir))
