"""Colab and local runtimes: the GPU a notebook needs, and where its artifacts live.

Three calls, made near the top of a notebook::

    from helpers import runtime
    runtime.require_gpu("grpo_format", "training the 0.5B policy")   # full profile, no GPU: one clear error
    runtime.mount_drive()                                             # Colab: mount Google Drive; elsewhere nothing
    ARTIFACTS = runtime.artifacts_dir("grpo_format")                  # where adapters and checkpoints go

``artifacts_dir`` answers, in this order:

1. ``$COURSE_ARTIFACTS_DIR`` when set (the folder itself; ``{assignment}`` in it is replaced by
   the assignment id);
2. ``./artifacts`` while nbgrader autogrades (``NBGRADER_EXECUTION=autograde``): the grader
   unpacks a submission's ``artifacts/`` beside the notebook, also on a Colab grader;
3. on Colab, ``/content/drive/MyDrive/course-kit/<id>/artifacts`` on Google Drive, which
   survives a runtime reset (files under ``/content`` do not); a ``DriveNotMountedError``
   says what to run when Drive is not mounted;
4. elsewhere ``./artifacts``, beside the notebook (the kernel's working folder), which is where
   the grader looks.

``helpers.submission.pack`` zips the notebook with this folder as ``artifacts/``, so the
grader sees the same layout wherever the student trained.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import profiles

ARTIFACTS_VARIABLE = "COURSE_ARTIFACTS_DIR"
"""Environment variable that overrides :func:`artifacts_dir` (a folder path)."""
DRIVE_MOUNTPOINT = Path("/content/drive")
"""Where :func:`mount_drive` mounts Google Drive on Colab."""
DRIVE_FOLDER = "course-kit"
"""Folder in *My Drive* holding one sub-folder per assignment."""


class GPUUnavailableError(RuntimeError):
    """The notebook's profile needs a CUDA GPU and there is none. The message says what to do."""


class DriveNotMountedError(RuntimeError):
    """On Colab, artifacts go to Google Drive, and Drive is not mounted. The message says what to run."""


def _on_colab() -> bool:
    return profiles.in_colab() and not profiles.is_autograding()


def _check_id(assignment_id: str) -> str:
    if not isinstance(assignment_id, str) or not assignment_id.strip() or any(c in assignment_id for c in "/\\"):
        raise ValueError(f"assignment_id must be the notebook's id such as 'grpo_format', got {assignment_id!r}")
    return assignment_id.strip()


def require_gpu(assignment_id: str, why: str, profile: str | None = None) -> str:
    """Stop with one actionable line when this notebook's run needs a GPU and has none.

    A GPU is needed when the profile is ``full`` (``COURSE_PROFILE=full``, or ``profile``), and
    on Colab also when no profile was chosen: there ``auto`` would quietly fall back to the tiny
    CPU version, whose adapter is not what gets graded. With ``COURSE_PROFILE=tiny`` (or ``auto``
    off Colab) nothing is needed. Returns the profile the notebook runs in (``"tiny"`` or
    ``"small"`` or ``"full"``).

    Args:
        assignment_id: the notebook's id, named in the message.
        why: what the GPU is for, e.g. ``"training the 0.5B policy"``.
        profile: overrides ``COURSE_PROFILE`` like :func:`helpers.profiles.get_profile`.

    Raises:
        GPUUnavailableError: a GPU is needed and CUDA is not available.
        profiles.ProfileError: the assignment does not run in the chosen profile.
    """
    assignment_id = _check_id(assignment_id)
    chosen = profiles.get_profile(profile)
    _check_runs_in(assignment_id, chosen)
    if profiles.cuda_available():
        return chosen
    requested = (profile or os.environ.get(profiles.PROFILE_VARIABLE) or "auto").strip().lower()
    if chosen == "full" or (_on_colab() and requested == "auto"):
        if _on_colab():
            raise GPUUnavailableError(
                f"{assignment_id} needs a GPU for {why}, and this Colab runtime has none: Runtime → Change runtime "
                f"type → T4 GPU → Save, then run the notebook again from the top (or set "
                f"os.environ['{profiles.PROFILE_VARIABLE}'] = 'tiny' in the first cell to practise on the small CPU "
                "version, which is not what gets graded)"
            )
        raise GPUUnavailableError(
            f"{assignment_id} needs a CUDA GPU for {why} in the full profile, and this machine has none: run it on "
            f"Colab with a T4 GPU, or on this CPU with {profiles.PROFILE_VARIABLE}=small (a real 135M model, tens of "
            f"minutes) or {profiles.PROFILE_VARIABLE}=tiny (a stand-in, seconds), set before starting Jupyter"
        )
    return chosen


def _check_runs_in(assignment_id: str, profile: str) -> None:
    """ProfileError in one line when the course's settings list other profiles for this notebook."""
    from . import course_settings

    try:
        runs_in = [p for p in profiles.PROFILES if p in course_settings.settings(assignment_id)["needs_gpu"]]
    except KeyError:  # a notebook the course does not list: nothing to check against
        return
    if profile not in runs_in:
        raise profiles.ProfileError(
            f"{assignment_id} has no {profile} profile (it runs in: {', '.join(runs_in)}): set "
            f"{profiles.PROFILE_VARIABLE} to one of those before starting Jupyter, then run the notebook again")


def mount_drive(mountpoint: str | Path | None = None) -> Path | None:
    """On Colab, mount Google Drive (Colab asks for permission once) and return *My Drive*.

    Already mounted: nothing is asked again. Not on Colab, or while autograding: does nothing
    and returns ``None``. Prints one line either way.
    """
    if not _on_colab():
        print(f"artifacts: saved in {shown_path(artifacts_root_hint())} (Google Drive is for Colab)")
        return None
    mountpoint = Path(mountpoint or DRIVE_MOUNTPOINT)
    my_drive = mountpoint / "MyDrive"
    if not my_drive.is_dir():
        from google.colab import drive

        drive.mount(str(mountpoint))
    if not my_drive.is_dir():
        raise DriveNotMountedError(f"Google Drive did not appear at {my_drive}: run this cell again and allow access")
    print(f"artifacts: Google Drive is mounted; they are saved in {my_drive / DRIVE_FOLDER}/<assignment>/artifacts")
    return my_drive


def shown_path(path) -> str:
    """``path`` as a student reads it: relative to the working folder (./artifacts) when inside it."""
    path = Path(path)
    try:
        return f"./{path.resolve().relative_to(Path.cwd().resolve())}"
    except ValueError:
        return str(path)


def artifacts_root_hint() -> str:
    override = os.environ.get(ARTIFACTS_VARIABLE)
    return override if override else str(Path.cwd() / "artifacts")


def artifacts_dir(assignment_id: str, create: bool = True, mountpoint: str | Path | None = None) -> Path:
    """The folder this notebook saves its artifacts (adapters, checkpoints, plots) in.

    See the module docstring for the order of the rules. The folder is created unless
    ``create`` is False.

    Raises:
        DriveNotMountedError: on Colab, Drive is not mounted (run :func:`mount_drive` first), and
            ``COURSE_ARTIFACTS_DIR`` is not set.
    """
    assignment_id = _check_id(assignment_id)
    override = os.environ.get(ARTIFACTS_VARIABLE, "").strip()
    if override:
        folder = Path(override.replace("{assignment}", assignment_id)).expanduser()
    elif profiles.is_autograding() or not _on_colab():
        folder = Path.cwd() / "artifacts"
    else:
        my_drive = Path(mountpoint or DRIVE_MOUNTPOINT) / "MyDrive"
        if not my_drive.is_dir():
            raise DriveNotMountedError(
                f"Google Drive is not mounted, so artifacts would vanish with the runtime: run "
                f"`from helpers import runtime; runtime.mount_drive()` first (or set "
                f"os.environ['{ARTIFACTS_VARIABLE}'] = '/content/artifacts' to keep them on this runtime only)"
            )
        folder = my_drive / DRIVE_FOLDER / assignment_id / "artifacts"
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OSError(f"cannot create the artifacts folder {folder} ({error.strerror}); "
                          f"set {ARTIFACTS_VARIABLE} to a writable folder") from None
    return folder


def is_colab() -> bool:
    """True in a Colab notebook (not in a grader's kernel, even one running on Colab)."""
    return _on_colab()


__all__ = [
    "ARTIFACTS_VARIABLE", "DRIVE_MOUNTPOINT", "DRIVE_FOLDER", "GPUUnavailableError", "DriveNotMountedError",
    "require_gpu", "mount_drive", "artifacts_dir", "is_colab",
]
