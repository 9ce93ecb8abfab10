"""helpers.runtime on Colab (a fake google.colab) and elsewhere: GPU check, Drive, artifacts folder."""
from __future__ import annotations

import colab_fake
import pytest

from helpers import profiles, runtime


@pytest.fixture()
def local(monkeypatch, tmp_path):
    """Not Colab, not grading, no override, working folder = a notebook's folder."""
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("COURSE_ARTIFACTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def no_cuda(monkeypatch):
    monkeypatch.setattr(profiles, "cuda_available", lambda: False)


def test_require_gpu_only_when_the_profile_needs_one(local, no_cuda, monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "tiny")
    assert runtime.require_gpu("grpo_format", "training") == "tiny"
    monkeypatch.setenv("COURSE_PROFILE", "auto")
    assert runtime.require_gpu("grpo_format", "training") == "tiny"  # a laptop: the CPU version
    monkeypatch.setenv("COURSE_PROFILE", "full")
    with pytest.raises(runtime.GPUUnavailableError) as error:
        runtime.require_gpu("grpo_format", "training the 0.5B policy")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("grpo_format needs a CUDA GPU for training the 0.5B policy in the full profile")
    assert "COURSE_PROFILE=tiny" in message


def test_the_small_profile_needs_no_gpu_and_an_assignment_without_one_says_so(local, no_cuda, monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "small")
    assert runtime.require_gpu("grpo_format", "training") == "small"
    with pytest.raises(profiles.ProfileError) as error:
        runtime.require_gpu("math_grpo", "training")
    message = str(error.value)
    assert "\n" not in message and message.startswith("math_grpo has no small profile (it runs in: tiny, full)")


def test_require_gpu_on_colab_says_how_to_switch_the_runtime(local, no_cuda, monkeypatch):
    colab_fake.install(monkeypatch)
    monkeypatch.delenv("COURSE_PROFILE", raising=False)  # Colab's default: auto
    with pytest.raises(runtime.GPUUnavailableError) as error:
        runtime.require_gpu("math_grpo", "LoRA training of Qwen2.5-Math-1.5B")
    message = str(error.value)
    assert "\n" not in message
    assert "this Colab runtime has none: Runtime → Change runtime type → T4 GPU → Save" in message
    monkeypatch.setenv("COURSE_PROFILE", "tiny")  # chosen on purpose: practice on the CPU
    assert runtime.require_gpu("math_grpo", "training") == "tiny"


def test_require_gpu_passes_with_cuda(local, monkeypatch):
    monkeypatch.setattr(profiles, "cuda_available", lambda: True)
    monkeypatch.setenv("COURSE_PROFILE", "full")
    assert runtime.require_gpu("grpo_format", "training") == "full"


def test_bad_assignment_id():
    with pytest.raises(ValueError, match="assignment_id must be the notebook's id"):
        runtime.artifacts_dir("../etc")


def test_artifacts_beside_the_notebook_elsewhere(local, capsys):
    assert runtime.mount_drive() is None
    assert capsys.readouterr().out.strip() == (
        "artifacts: saved in ./artifacts (Google Drive is for Colab)")  # the notebook's folder
    folder = runtime.artifacts_dir("tiny_grpo")
    assert folder == local / "artifacts" and folder.is_dir()


def test_artifacts_env_override(local, monkeypatch):
    monkeypatch.setenv("COURSE_ARTIFACTS_DIR", str(local / "runs" / "{assignment}"))
    assert runtime.artifacts_dir("math_grpo") == local / "runs" / "math_grpo"


def test_artifacts_on_colab_go_to_drive(local, monkeypatch, capsys):
    fake = colab_fake.install(monkeypatch)
    mountpoint = local / "content" / "drive"
    with pytest.raises(runtime.DriveNotMountedError) as error:
        runtime.artifacts_dir("grpo_format", mountpoint=mountpoint)
    assert "\n" not in str(error.value) and "runtime.mount_drive()" in str(error.value)
    my_drive = runtime.mount_drive(mountpoint)
    assert my_drive == mountpoint / "MyDrive" and fake.mounts == [str(mountpoint)]
    assert "Google Drive is mounted" in capsys.readouterr().out
    runtime.mount_drive(mountpoint)
    assert fake.mounts == [str(mountpoint)]  # mounted once, not asked again
    folder = runtime.artifacts_dir("grpo_format", mountpoint=mountpoint)
    assert folder == mountpoint / "MyDrive" / "course-kit" / "grpo_format" / "artifacts" and folder.is_dir()


def test_grading_on_a_colab_machine_uses_the_submitted_artifacts(local, monkeypatch):
    colab_fake.install(monkeypatch)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert runtime.artifacts_dir("grpo_format", mountpoint=local / "nodrive") == local / "artifacts"
    assert runtime.mount_drive(local / "nodrive") is None and not runtime.is_colab()
