"""The judgments formats, and reading a file or a folder of them by telling each file's format from its name and
its first 64 KiB, as readers tell runs.

Other packages add formats through the entry point group ``trajcheck.judgments`` (where the built-in formats are
declared too, and loaded from :data:`BUILTIN` even when the package's metadata is not installed): its value is a
:class:`~trajcheck.scoring.judgments.model.JudgmentFormat` (or a function of no argument returning one). The
group is read when a judgments path is first read; an entry point that fails to load, is not a format or takes a
name a format has is skipped, and named in every :class:`Read`'s ``notes`` (never a crash).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import aer, arb, cube, osworld, tables
from .files import head
from .model import MAX_JUDGMENTS, Judgment, JudgmentFormat

GROUP = "trajcheck.judgments"
#: The built-in formats, in the order they are asked to claim a file (the more particular first).
BUILTIN: tuple[JudgmentFormat, ...] = (arb.FORMAT, cube.FORMAT, osworld.RESULT, osworld.SUMMARY, aer.FORMAT,
                                       tables.RUBRIC, tables.OURS)
#: The files of a folder never looked at: screenshots, videos, archives and other binary data (every other file
#: is offered to the formats, an entry point's among them).
SKIPPED = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".mp4", ".webm", ".zip", ".gz", ".zst", ".tar",
           ".parquet", ".npy", ".npz", ".pkl", ".pickle", ".msgpack", ".pt", ".bin", ".db", ".lock")
#: The most files of a folder looked at.
MAX_FILES = 200_000

_loaded: list[JudgmentFormat] | None = None
_load_notes: list[str] = []


def all_formats() -> list[JudgmentFormat]:
    """The built-in formats, then those of the entry point group (by entry point name)."""
    global _loaded
    if _loaded is None:
        _loaded = list(BUILTIN) + _entry_formats({f.name for f in BUILTIN})
    return _loaded


def _entry_formats(taken: set[str]) -> list[JudgmentFormat]:
    from ...base.entrypoints import load_group

    _load_notes.clear()
    out, failed = load_group(GROUP, JudgmentFormat, lambda f: f.name, taken, "a format")
    _load_notes.extend(f"{GROUP} entry point {name!r} ({value}) {why}" if value else f"{GROUP}: {why}"
                       for name, value, why in failed)
    return out


def reset() -> None:
    """Forget the formats loaded (tests that install an entry point call it)."""
    global _loaded
    _loaded = None


@dataclass
class Read:
    """What a judgments path held: its judgments, how many files of each format, and notes (files no format
    claims in a folder, judge calls that failed, replies without a verdict, entry points that did not load)."""

    path: str
    judgments: list[Judgment] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # format -> files read
    notes: list[str] = field(default_factory=list)
    unclaimed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "judgments": len(self.judgments), "files": dict(sorted(self.files.items())),
                "unclaimed_files": self.unclaimed, "notes": self.notes}


def format_of(path: Path) -> JudgmentFormat | None:
    """The first format that claims the file, or None."""
    name, text = path.name, head(path)
    return next((f for f in all_formats() if f.claims(name, text)), None)


def _files(root: Path) -> list[Path]:
    """The files of a folder a format may hold, sorted by path (so the judgments come in the same order on every
    machine); hidden folders are skipped."""
    out: list[Path] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for n in sorted(names):
            if not n.lower().endswith(SKIPPED):
                out.append(Path(here) / n)
                if len(out) > MAX_FILES:
                    raise ValueError(f"{root}: over {MAX_FILES} files; give the judge's own folder")
    return sorted(out)


def read_path(path: Path) -> Read:
    """Every judgment of a file or a folder (each file read by the format that claims it). A file given alone that
    no format claims is read as our table (whose errors name the line and the field, and list the formats); in
    a folder it is counted and skipped.
    A run judged twice by one judge in one file with no sample to tell the two apart is a ValueError; judgments
    of one run by one judge in several files are samples (each named by its file, when it names none)."""
    out = Read(str(path))
    if path.is_dir():
        files, alone = _files(path), False
    elif path.exists():
        files, alone = [path], True
    else:
        raise ValueError(f"{path}: no such file or folder")
    for f in files:
        fmt = format_of(f)
        if fmt is None and not alone:
            out.unclaimed += 1
            continue
        if fmt is None:  # a file given alone is read as our table, whose errors name the line and the field
            try:
                got = tables.OURS.read(f)
            except ValueError as exc:
                raise ValueError(f"{exc} (no judgments format recognises the file; the formats: "
                                 + ", ".join(x.name for x in all_formats()) + "; docs/judges.md)") from None
            fmt = tables.OURS
        else:
            got = fmt.read(f)
        out.files[fmt.name] = out.files.get(fmt.name, 0) + 1
        out.judgments += got.judgments
        out.notes += got.notes
        if len(out.judgments) > MAX_JUDGMENTS:
            raise ValueError(f"{path}: over the limit of {MAX_JUDGMENTS} judgments")
    out.notes += _load_notes
    out.judgments = _samples(out.judgments)
    return out


def _samples(judgments: list[Judgment]) -> list[Judgment]:
    """Judgments of one run by one judge: in one file, an error unless their samples differ; across files, each
    is a sample (named by its file where it names none)."""
    from dataclasses import replace

    first: dict[tuple[str, str, str | None], Judgment] = {}
    files: dict[tuple[str, str], set[str]] = {}
    for j in judgments:
        files.setdefault((j.run_id, j.judge), set()).add(file_of(j))
        prev = first.setdefault((j.run_id, j.judge, j.sample), j)
        if prev is not j and file_of(prev) == file_of(j):
            raise ValueError(f"{j.where}: judge {j.judge!r} already judged run {j.run_id!r} at {prev.where}")
    return [replace(j, sample=file_of(j)) if j.sample is None and len(files[(j.run_id, j.judge)]) > 1 else j
            for j in judgments]


def file_of(j: Judgment) -> str:
    """The file a judgment is from: its ``where`` without the line (``x.csv:3``) or the entry (``results.json[2]``)."""
    return j.where.split("[", 1)[0].rsplit(":", 1)[0]
