import pytest

from helpers import env


def test_profile_override_and_auto(monkeypatch):
    monkeypatch.setenv(env.PROFILE_VARIABLE, "full")
    assert env.get_profile() == "full"
    monkeypatch.setenv(env.PROFILE_VARIABLE, "auto")
    assert env.get_profile() == ("full" if env.cuda_available() else "tiny")
    assert env.get_profile("tiny") == "tiny"  # the argument wins over the variable


def test_unknown_profile_is_one_clear_error(monkeypatch):
    monkeypatch.setenv(env.PROFILE_VARIABLE, "huge")
    with pytest.raises(env.ProfileError) as info:
        env.get_profile()
    message = str(info.value)
    assert "'huge'" in message and "COURSE_PROFILE" in message and "tiny" in message
    assert "\n" not in message


def test_seed_everything_repeats_draws():
    import random

    import numpy as np
    import torch

    env.seed_everything(3)
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    env.seed_everything(3)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first


def test_grading_and_offline_flags(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert not env.is_autograding()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert env.is_autograding()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    env.set_offline()
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert not env.in_colab()


def test_seed_and_step_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(env.SEED_VARIABLE, raising=False)
    monkeypatch.delenv("COURSE_MAX_STEPS", raising=False)
    assert env.seed(42) == 42 and env.limit(25) == 25
    monkeypatch.setenv(env.SEED_VARIABLE, "7")
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    monkeypatch.setenv("COURSE_MAX_EVAL", "500")
    assert env.seed(42) == 7
    assert env.limit(25) == 2 and env.limit(1) == 1
    assert env.limit(64, "eval") == 64  # a cap above n changes nothing
    monkeypatch.setenv(env.SEED_VARIABLE, "seven")
    with pytest.raises(ValueError, match="COURSE_SEED='seven'"):
        env.seed()
