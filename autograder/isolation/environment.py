"""The environment of everything the grader runs on a student's behalf, built from an allowlist.

A kernel or an evaluator never inherits the grader's environment: no ``HF_TOKEN``, no grader
``HOME``, no ``HF_HOME`` (whose folder holds the instructor's token), no cloud credentials. It gets
the fixed basics below, the few settings in :data:`PASSED` copied from the grader, and what the
caller sets explicitly (profile, limits, cache locations inside the sandbox).
"""
from __future__ import annotations

import os
import re
import sys

from autograder.isolation.spec import CHANNEL_INSIDE, HOME

PASSED = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "LANG", "LC_ALL", "TZ")
"""Grader settings a notebook may see (none of them a secret)."""
SECRET_NAME = re.compile(r"TOKEN(?!IZER)|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|ACCESS_KEY|PRIVATE", re.IGNORECASE)


def basics(sandboxed: bool, home: str | None = None) -> dict[str, str]:
    """HOME, PATH, temp and cache folders: inside the sandbox's own filesystem when sandboxed."""
    home = HOME if sandboxed else (home or HOME)
    return {"HOME": home, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
            "TMPDIR": "/tmp" if sandboxed else os.environ.get("TMPDIR", "/tmp"),
            "MPLCONFIGDIR": "/tmp/matplotlib" if sandboxed else f"{home}/.matplotlib",
            "XDG_CACHE_HOME": "/tmp/.cache" if sandboxed else f"{home}/.cache",
            "HF_HOME": "/tmp/.cache/huggingface" if sandboxed else f"{home}/.cache/huggingface",
            "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])}


def allowlisted(explicit: dict[str, str], sandboxed: bool, home: str | None = None) -> dict[str, str]:
    """The whole environment for a sandboxed (or, without isolation, a plain) process."""
    env = basics(sandboxed, home)
    env.update({name: os.environ[name] for name in PASSED if name in os.environ})
    env.update({k: str(v) for k, v in explicit.items()})
    return {k: v for k, v in env.items() if not SECRET_NAME.search(k)}


def inside_path(host_path: str, channel: str) -> str:
    """A path in the channel folder as the sandbox sees it."""
    return host_path.replace(channel.rstrip("/"), CHANNEL_INSIDE, 1) if host_path.startswith(channel) else host_path
