"""A stand-in for the ``google.colab`` package, so the Colab code paths run in tests.

It behaves like Colab where the helpers touch it: ``drive.mount`` creates ``MyDrive`` under
the mount point, ``_message.blocking_request("get_ipynb")`` returns the open notebook as Colab
does (``{"ipynb": {...}}``), ``files.download`` records what was offered. Installed with
:func:`install` (a pytest ``monkeypatch``), it also sets ``COLAB_RELEASE_TAG`` like a real
runtime.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path


class FakeColab:
    def __init__(self, notebook: dict | None = None):
        self.notebook = notebook
        """What ``get_ipynb`` returns (a notebook as a JSON dict); None: Colab answers empty."""
        self.downloads: list[str] = []
        self.mounts: list[str] = []
        self.requests: list[tuple] = []

    def modules(self) -> dict[str, types.ModuleType]:
        colab = types.ModuleType("google.colab")
        drive = types.ModuleType("google.colab.drive")
        files = types.ModuleType("google.colab.files")
        message = types.ModuleType("google.colab._message")

        def mount(mountpoint, force_remount=False, timeout_ms=120000, readonly=False):
            self.mounts.append(mountpoint)
            (Path(mountpoint) / "MyDrive").mkdir(parents=True, exist_ok=True)

        def download(filename):
            if not Path(filename).is_file():
                raise FileNotFoundError(f"Cannot find file: {filename}")
            self.downloads.append(str(filename))

        def blocking_request(request_type, request="", timeout_sec=5, parent=None):
            self.requests.append((request_type, timeout_sec))
            if request_type != "get_ipynb" or self.notebook is None:
                return None
            return {"ipynb": self.notebook}

        drive.mount = mount
        files.download = download
        message.blocking_request = blocking_request
        colab.drive, colab.files, colab._message = drive, files, message
        return {"google.colab": colab, "google.colab.drive": drive,
                "google.colab.files": files, "google.colab._message": message}


def install(monkeypatch, notebook: dict | None = None) -> FakeColab:
    fake = FakeColab(notebook)
    try:
        import google  # noqa: F401  (a namespace package when protobuf is installed)
    except ImportError:
        monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    for name, module in fake.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-fake")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("COURSE_ARTIFACTS_DIR", raising=False)
    return fake
