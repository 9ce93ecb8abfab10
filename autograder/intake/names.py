"""File and folder names that Windows, macOS and Linux can all hold.

``collect`` writes a folder per student and copies uploads whose names come from students and
from the LMS. An instructor may sync that folder to a Windows machine or OneDrive, where a
folder called ``con`` or ``aux`` cannot exist, ``a.`` and ``a `` lose their trailing dot or
space, ``<>:"|?*`` are invalid, and ``Ann`` and ``ann`` are one folder. :func:`portable` turns
one name into a safe one; :class:`Namer` keeps the names of one folder unique without regard to
case or Unicode normalisation (macOS folds both).
"""
from __future__ import annotations

import re
import unicodedata

WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$", "clock$"]
    + [f"{device}{n}" for device in ("com", "lpt") for n in (*"123456789", "¹", "²", "³")]
)
"""Device names Windows reserves, with or without an extension (``con.txt`` too)."""
INVALID = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
MAX_NAME_BYTES = 200
"""Well under the 255-byte limit of every common file system, leaving room for ``-2`` suffixes."""


def is_reserved(name: str) -> bool:
    """True for a Windows device name (``CON``, ``com1.txt``, ``Nul .ipynb``)."""
    stem = name.split(".", 1)[0].rstrip(" ").lower()
    return stem in WINDOWS_RESERVED


def portable(name: str, fallback: str = "unnamed") -> str:
    """``name`` as one path component every common system can hold: invalid characters become
    ``_``, trailing dots and spaces go, a reserved device name gets a ``_`` after its stem, and
    over-long names are shortened keeping their extension. Never empty, ``.`` or ``..``."""
    name = unicodedata.normalize("NFC", str(name))
    name = INVALID.sub("_", name).lstrip(" ").rstrip(". ")
    if name in ("", ".", ".."):
        name = fallback
    if is_reserved(name):
        stem, dot, rest = name.partition(".")
        name = f"{stem.rstrip(' ')}_{dot}{rest}"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        stem, dot, suffix = name.rpartition(".")
        if not dot or len(suffix) > 16:
            stem, suffix = name, ""
        keep = stem.encode("utf-8")[: MAX_NAME_BYTES - len(suffix.encode("utf-8")) - 1].decode("utf-8", "ignore")
        name = f"{keep}.{suffix}" if suffix else keep
    return name


def fold(name: str) -> str:
    """The key two names collide on in a case-insensitive, normalisation-insensitive folder."""
    return unicodedata.normalize("NFC", name).casefold()


class Namer:
    """Unique portable names within one folder: ``claim("Ann")`` then ``claim("ann")`` gives
    ``Ann`` and ``ann-2``."""

    def __init__(self, taken=()):
        self.taken = {fold(name) for name in taken}

    def claim(self, wanted: str) -> str:
        name = portable(wanted)
        if fold(name) in self.taken:
            stem, dot, suffix = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
            number = 2
            while fold(candidate := f"{stem}-{number}{dot}{suffix}") in self.taken:
                number += 1
            name = candidate
        self.taken.add(fold(name))
        return name
