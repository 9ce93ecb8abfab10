import pytest

from helpers import profiles


def test_profile_override_and_auto(monkeypatch):
    monkeypatch.setenv(profiles.PROFILE_VARIABLE, "full")
    assert profiles.get_profile() == "full"
    monkeypatch.setenv(profiles.PROFILE_VARIABLE, "auto")
    assert profiles.get_profile() == ("full" if profiles.cuda_available() else "tiny")
    assert profiles.get_profile("tiny") == "tiny"  # the argument wins over the variable


def test_unknown_profile_is_one_clear_error(monkeypatch):
    monkeypatch.setenv(profiles.PROFILE_VARIABLE, "huge")
    with pytest.raises(profiles.ProfileError) as info:
        profiles.get_profile()
    message = str(info.value)
    assert "'huge'" in message and "COURSE_PROFILE" in message and "tiny" in message
    assert "\n" not in message


def test_seed_everything_repeats_draws():
    import random

    import numpy as np
    import torch

    profiles.seed_everything(3)
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    profiles.seed_everything(3)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first


def test_grading_and_offline_flags(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert not profiles.is_autograding()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert profiles.is_autograding()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    profiles.set_offline()
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert not profiles.in_colab()


def test_seed_and_step_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(profiles.SEED_VARIABLE, raising=False)
    monkeypatch.delenv("COURSE_MAX_STEPS", raising=False)
    assert profiles.seed(42) == 42 and profiles.limit(25) == 25
    monkeypatch.setenv(profiles.SEED_VARIABLE, "7")
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    monkeypatch.setenv("COURSE_MAX_EVAL", "500")
    assert profiles.seed(42) == 7
    assert profiles.limit(25) == 2 and profiles.limit(1) == 1
    assert profiles.limit(64, "eval") == 64  # a cap above n changes nothing
    monkeypatch.setenv(profiles.SEED_VARIABLE, "seven")
    with pytest.raises(ValueError, match="COURSE_SEED='seven'"):
        profiles.seed()
