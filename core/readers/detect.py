"""``trajcheck formats --detect FOLDER``: which readers looked at each folder, and why each did or did not claim it.

The folders are those discovery asks about (:func:`trajcheck.readers.discovery.discover`): the argument, then its
subfolders (hidden ones, ``node_modules`` and what an ignore file names are passed over), not below a claimed one.
A folder with no file in it (a folder of runs) is listed only when it is the argument.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from .discovery import _SKIP_DIRS, IGNORE_FILE, NATIVE, _ignored, fit, readers
from .kit.reader import NO_CLAIM, FolderClaim, Reader

#: How many folders are looked at, at most (the rest are counted in the last row).
MAX_FOLDERS = 200


@dataclass(frozen=True)
class Looked:
    """One reader's look at one folder."""

    folder: str  # relative to the argument ("." for the argument itself)
    reader: str
    fit: int  # 0: not claimed
    why: str
    reads: bool  # the reader that reads the folder (the best fit)

    def to_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "reader": self.reader, "claims": self.fit > NO_CLAIM, "fit": self.fit,
                "reads": self.reads, "why": self.why}


def look(path: Path, rel: str, only: list[Reader] | None = None) -> list[Looked]:
    """Every reader's claim on ``path`` (or those of ``only``), the one that reads it marked: the native reader's
    claim stands alone, else the best fit (the first of equal fits)."""
    asked = only if only is not None else readers()
    claims: list[tuple[Reader, FolderClaim]] = [(r, r.judge(path)) for r in asked]
    native = next((c for r, c in claims if r is NATIVE and c.claimed), None)
    best: Reader | None = NATIVE if native is not None and only is None else None
    if best is None:
        got = [(r, c) for r, c in claims if c.claimed]
        best = max(got, key=lambda rc: fit(*rc))[0] if got else None
    return [Looked(rel, r.name, c.fit, c.why, r is best) for r, c in claims]


def detect(root: Path, only: list[Reader] | None = None) -> list[Looked]:
    """The readers' looks at ``root`` and at the folders below it that discovery would ask about."""
    out = look(root, ".", only)
    if any(x.reads for x in out):
        return out
    folders = 0
    for dirpath, dirnames, files in os.walk(root, followlinks=False):
        dirnames.sort()
        here = Path(dirpath)
        skip = _ignored(here) if IGNORE_FILE in files else []
        keep = []
        for d in dirnames:
            if d.startswith(".") or d in _SKIP_DIRS or any(fnmatch.fnmatchcase(d, pat) for pat in skip):
                continue
            sub = here / d
            folders += 1
            if folders > MAX_FOLDERS:
                out.append(Looked(sub.relative_to(root).as_posix(), "", NO_CLAIM,
                                  f"more folders not looked at (at most {MAX_FOLDERS})", False))
                return out
            rows = look(sub, sub.relative_to(root).as_posix(), only) if _has_files(sub) else []
            out += rows
            if not any(x.reads for x in rows):
                keep.append(d)
        dirnames[:] = keep
    return out


def _has_files(path: Path) -> bool:
    try:
        with os.scandir(path) as it:
            return any(not e.is_dir(follow_symlinks=False) for e in it)
    except OSError:
        return True


@dataclass(frozen=True)
class Reason:
    """Readers that gave one folder the same reason (``formats --detect --all`` groups them)."""

    readers: tuple[str, ...]
    claims: bool
    reads: bool
    why: str


@dataclass(frozen=True)
class FolderView:
    """One folder as ``formats --detect`` shows it: the reader that reads it (None: none claims it) and its
    reason (or, none claiming it, the first asked reader's), and every reader's reason grouped."""

    folder: str
    reader: str | None
    why: str
    asked: int  # readers that looked
    reasons: tuple[Reason, ...]
    note: bool = False  # not a folder: the note that more folders were not looked at


def folders(rows: list[dict[str, object]]) -> list[FolderView]:
    """:func:`detect`'s rows (as dicts, ``Looked.to_dict``), one view per folder in the order they came. Readers
    giving one folder the same reason are one :class:`Reason`, the reader that reads it first."""
    by: dict[str, list[dict[str, object]]] = {}
    for r in rows:
        by.setdefault(str(r["folder"]), []).append(r)
    out = []
    for folder, looks in by.items():
        if len(looks) == 1 and not looks[0]["reader"]:  # MAX_FOLDERS reached: the note, not a folder
            out.append(FolderView(folder, None, str(looks[0]["why"]), 0, (), note=True))
            continue
        groups: dict[tuple[bool, bool, str], list[str]] = {}
        for r in sorted(looks, key=lambda r: not r["reads"]):
            groups.setdefault((bool(r["claims"]), bool(r["reads"]), str(r["why"])), []).append(str(r["reader"]))
        reasons = tuple(Reason(tuple(names), claims, reads, why) for (claims, reads, why), names in groups.items())
        reader = next((x for x in looks if x["reads"]), None)
        first = reader or looks[0]
        out.append(FolderView(folder, None if reader is None else str(reader["reader"]), str(first["why"]),
                              len(looks), reasons))
    return out


def summary(views: list[FolderView]) -> str:
    """The folders counted by the reader that reads them: ``28 folders: trajcheck.run/1 28``, those no reader
    claims last (``none 1``)."""
    from collections import Counter

    shown = [v for v in views if not v.note]
    counts = Counter(v.reader for v in shown if v.reader is not None)
    parts = [f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    unclaimed = sum(1 for v in shown if v.reader is None)
    if unclaimed:
        parts.append(f"claimed by none {unclaimed}")
    text = f"{len(shown)} folder{'' if len(shown) == 1 else 's'}: {', '.join(parts) or 'none'}"
    return text + ("; " + next(v.why for v in views if v.note) if any(v.note for v in views) else "")


def alike(views: list[FolderView]) -> list[tuple[tuple[str, ...], FolderView]]:
    """The folders whose readers gave the same reasons (a folder of runs of one format: every run alike),
    each group with its first folder's view, in the order first seen (``formats --detect --all``)."""
    groups: dict[tuple[Reason, ...] | str, list[FolderView]] = {}
    for v in views:
        groups.setdefault(v.reasons if not v.note else v.folder, []).append(v)
    return [(tuple(v.folder for v in vs), vs[0]) for vs in groups.values()]
