"""The one ZIP extractor of the intake: an LMS download and every archive a student uploaded.

Limits hold ACROSS nesting, per submission (one :class:`Budget`):

- total bytes written and number of files (``Budget``), counted as they are written, never
  from the headers alone (a header can lie);
- nesting depth (``Budget.max_depth``: the uploaded archive is depth 1);
- expansion ratio: everything written out of one uploaded archive, nested archives included,
  may exceed ``MAX_RATIO`` times the upload's own size only while it stays under
  ``RATIO_FLOOR`` (a 0.02 MiB upload of nested zips stops at 16 MiB, not at 600 MiB);
- one member over 1 MiB compressed more than ``MAX_RATIO``:1 is refused on its header.

A member over a limit is refused with a line naming it and the limit; the other members are
still extracted, notebooks first, then the rest from the smallest up, so a notebook is graded
even when the artifacts zipped with it are refused. Names are made portable
(:mod:`autograder.intake.names`); names stored without the ZIP's UTF-8 flag are re-decoded the
way unzip tools do (cp437 bytes that form valid UTF-8 are UTF-8). Links, absolute paths and
``..`` never leave the target folder.
"""
from __future__ import annotations

import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake.names import Namer, fold

JUNK = {"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints", "__pycache__"}
MAX_FILES = 5000
MAX_BYTES = 1024 * 2**20
MAX_ZIP_DEPTH = 2
MAX_RATIO = 200
RATIO_FLOOR = 16 * 2**20
"""Bytes an upload may expand to whatever its ratio: small zips of notebooks and logs are fine."""
UTF8_FLAG = 0x800
CHUNK = 1 << 20


class Budget:
    """Bytes, files and nesting depth still allowed in one submission (archives included)."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES, max_depth: int = MAX_ZIP_DEPTH):
        self.bytes, self.files, self.max_depth = max_bytes, max_files, max_depth
        self.limit_mb = max_bytes // 2**20
        self.limit_files = max_files

    def take(self, size: int, force: bool = False) -> bool:
        """Count a file of ``size`` bytes; False (and nothing counted) when it does not fit.
        ``force`` counts it anyway: an uploaded archive, which its contents replace (the limits
        then apply to what it holds, member by member)."""
        if not force and (size > self.bytes or self.files <= 0):
            return False
        self.bytes -= size
        self.files -= 1
        return True

    def give_back(self, size: int) -> None:
        """An archive replaced by its contents no longer counts."""
        self.bytes += size
        self.files += 1


@dataclass
class Extraction:
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(archive!member, why) for every member not written."""
    renamed: list[tuple[str, str]] = field(default_factory=list)
    """(archive!member, the portable name it was written under)."""
    times: dict[str, tuple] = field(default_factory=dict)
    """Written path (relative to the target, '/'-separated) -> the member's ZIP date_time: local
    time of whoever made the ZIP, with no time zone."""
    unreadable: str | None = None

    def lines(self) -> list[str]:
        return ([f"{path}: {why}" for path, why in self.refused]
                + [f"{path}: saved as {name} (a name that not every system can hold)" for path, name in self.renamed])


class _Meter:
    """Bytes written out of one uploaded archive, nested archives included."""

    def __init__(self, root_size: int):
        self.root_size, self.expanded, self.tripped = max(root_size, 1), 0, False

    @property
    def allowed(self) -> int:
        return max(RATIO_FLOOR, MAX_RATIO * self.root_size)

    def why(self) -> str:
        return (f"the upload ({self.root_size / 2**20:.2f} MiB) expands past {self.allowed / 2**20:.0f} MiB "
                f"(over {MAX_RATIO}:1 across nested archives, a zip bomb?): not extracted")


def member_name(info: zipfile.ZipInfo) -> str:
    """The member's name as its author wrote it: without the UTF-8 flag Python reads cp437; bytes
    that are valid UTF-8 (what macOS, Linux and most tools write) are re-read as UTF-8."""
    name = info.filename
    if info.flag_bits & UTF8_FLAG:
        return name
    try:
        return name.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return name


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size < 10 * 2**20 else f"{size / 2**20:.0f} MiB"


def extract_zip(archive: Path, target: Path, budget: Budget, label: str | None = None, nested: bool = True,
                within: tuple[int, _Meter] | None = None) -> Extraction:
    """Extract ``archive`` into ``target`` within ``budget``. ``nested``: archives inside are
    extracted in place too (up to ``budget.max_depth``); else they are kept as files. ``within``:
    for an archive found inside another, its depth and the outer archive's expansion meter."""
    label = label or archive.name
    depth, meter = within or (1, _Meter(archive.stat().st_size))
    result = Extraction()
    try:
        handle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as error:
        result.unreadable = f"not a readable ZIP file ({type(error).__name__})"
        return result
    target.mkdir(parents=True, exist_ok=True)
    namers: dict[str, Namer] = {}
    chosen: dict[tuple[str, str], str] = {}
    skipped_after_trip = 0
    with handle:
        members = [m for m in handle.infolist() if not m.is_dir()]
        # what is graded first, then the rest from the smallest up: a limit refuses the biggest
        members.sort(key=lambda m: (not member_name(m).lower().endswith(".ipynb"), m.file_size, member_name(m)))
        for info in members:
            name = member_name(info)
            shown = f"{label}!{name}"
            parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
            if not parts or any(p in JUNK or p.startswith("._") for p in parts):
                continue
            if name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":"):
                result.refused.append((shown, "a path outside the archive: not extracted"))
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                result.refused.append((shown, "a symbolic link: not extracted"))
                continue
            if info.flag_bits & 0x1:
                result.refused.append((shown, "encrypted: not extracted"))
                continue
            if meter.tripped:
                skipped_after_trip += 1
                continue
            if budget.files <= 0:
                result.refused.append((shown, f"over the {budget.limit_files}-file limit: not extracted"))
                continue
            if info.file_size > budget.bytes:
                result.refused.append((shown, f"{_mib(info.file_size)}, over the {budget.limit_mb} MiB a submission "
                                              f"may hold ({_mib(budget.bytes)} left): not extracted"))
                continue
            if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                result.refused.append((shown, f"{_mib(info.file_size)} compressed "
                                              f"{info.file_size // max(info.compress_size, 1)}:1 (a zip bomb?): "
                                              "not extracted"))
                continue
            if info.file_size > meter.allowed - meter.expanded:
                meter.tripped = True
                result.refused.append((shown, meter.why()))
                continue
            relative = _place(parts, namers, chosen)
            if relative != "/".join(parts):
                result.renamed.append((shown, relative))
            destination = target / relative
            why = _write(handle, info, destination, budget, meter)
            if why:
                result.refused.append((shown, why))
                continue
            result.times[relative] = info.date_time
            if nested and destination.suffix.lower() == ".zip":
                if depth >= budget.max_depth:
                    result.refused.append((shown, f"an archive nested {depth + 1} deep (the limit is "
                                                  f"{budget.max_depth}): kept as it is, not extracted"))
                    continue
                inner = extract_archive_in_place(destination, budget, shown, depth + 1, meter)
                result.refused += inner.refused
                result.renamed += inner.renamed
                if inner.unreadable:
                    result.refused.append((shown, f"{inner.unreadable}: kept as it is"))
    if skipped_after_trip:
        result.refused.append((label, f"{skipped_after_trip} more member(s) not extracted after the upload "
                                      f"expanded past {meter.allowed / 2**20:.0f} MiB"))
    return result


def _place(parts: list[str], namers: dict, chosen: dict) -> str:
    """The portable, case-insensitively unique relative path for a member's path parts; the same
    folder in two members maps to the same name."""
    parent = ""
    for part in parts:
        key = (parent, part)
        if key not in chosen:
            chosen[key] = namers.setdefault(parent, Namer()).claim(part)
        parent = f"{parent}/{chosen[key]}" if parent else chosen[key]
    return parent


def _write(handle: zipfile.ZipFile, info: zipfile.ZipInfo, destination: Path, budget: Budget,
           meter: _Meter) -> str | None:
    """Stream one member to ``destination``, counting what is really written; None when written,
    else why not (and nothing left behind)."""
    room = min(budget.bytes, meter.allowed - meter.expanded)
    written = 0
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        with handle.open(info) as source, open(destination, "wb") as sink:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > info.file_size or written > room:
                    break
                sink.write(chunk)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, ValueError, EOFError) as error:
        destination.unlink(missing_ok=True)
        return f"unreadable ({type(error).__name__}): not extracted"
    if written > info.file_size:
        destination.unlink(missing_ok=True)
        return f"holds more than its header declares ({_mib(info.file_size)}): not extracted"
    if written > meter.allowed - meter.expanded:
        destination.unlink(missing_ok=True)
        meter.tripped = True
        return meter.why()
    if not budget.take(written):
        destination.unlink(missing_ok=True)
        return f"over the {budget.limit_mb} MiB / {budget.limit_files}-file limit of a submission: not extracted"
    meter.expanded += written
    return None


def extract_archive_in_place(archive: Path, budget: Budget, label: str, depth: int = 1,
                             meter: _Meter | None = None) -> Extraction:
    """Replace ``archive`` by its contents, in its own folder (a name already there gets the
    archive's name in front). The archive is kept when it cannot be read."""
    size = archive.stat().st_size
    inner = archive.parent / f".unzip-{archive.name}"
    shutil.rmtree(inner, ignore_errors=True)
    budget.give_back(size)  # its contents replace it
    result = extract_zip(archive, inner, budget, label, within=(depth, meter or _Meter(size)))
    if result.unreadable:
        shutil.rmtree(inner, ignore_errors=True)
        if not budget.take(size):
            archive.unlink()
            result.unreadable += f", and over the {budget.limit_mb} MiB limit of a submission: removed"
        return result
    archive.unlink()
    namer = Namer(p.name for p in archive.parent.iterdir() if p != inner)
    for entry in sorted(inner.iterdir()):
        wanted = f"{archive.stem}-{entry.name}" if fold(entry.name) in namer.taken else entry.name
        entry.rename(archive.parent / namer.claim(wanted))
    inner.rmdir()
    return result


def extract_archives(folder: Path, notes: list[str], budget: Budget) -> None:
    """Extract every ZIP under ``folder`` in place within ``budget``, nested ones included; one
    note per archive extracted and per member refused."""
    for archive in sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".zip" and p.is_file()
                          and not p.is_symlink() and not set(p.relative_to(folder).parts) & JUNK):
        label = str(archive.relative_to(folder))
        result = extract_archive_in_place(archive, budget, label)
        if result.unreadable:
            notes.append(f"{label} is {result.unreadable}: left as is")
            continue
        notes.append(f"extracted {label}")
        notes.extend(result.lines())
