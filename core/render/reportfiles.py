"""The report's files: safe, stable page names, and writing only what changed.

A run's page is named by its id (:func:`page_name`), so a link to it stays valid while the ledger grows or
shrinks. A report records what it wrote in ``.trajcheck-report.json`` in its folder (each file's digest and
size); the next report into that folder computes every page, writes only those whose bytes changed (each
atomically: a reader sees the old page or the new one), writes the index last, then removes the files the
previous report wrote that this one no longer has (a run gone from the ledger) and records the new list. A
file the record lists but that is missing or has another size is written again. Files in the folder that no
report of trajcheck wrote are never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_write

#: The record of a report's files, in its folder.
MANIFEST = ".trajcheck-report.json"
#: Longest name (before ``.html``) kept as it is; longer ids are cut and hashed.
MAX_NAME = 80
_PLAIN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SAFE_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~-]*$")
#: Names Windows reserves for devices, whatever the extension.
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})


def page_name(key: str) -> str:
    """A file name (without extension) for ``key`` (a run id, a task id) that is safe on every file system and
    in a URL, and that no other key gets: the key itself when it is lowercase ASCII letters, digits, ``.``, ``_``
    and ``-`` (starting with a letter or digit, at most :data:`MAX_NAME` long, not a device name); otherwise a
    readable part of it, ``~`` and 12 hex of its hash. ``~`` never appears in a key kept as it is, so the two
    kinds never meet; two keys of the second kind meet only if their hashes do."""
    stem = key.split(".", 1)[0]
    if len(key) <= MAX_NAME and _PLAIN.match(key) and stem not in _RESERVED and not key.endswith("."):
        return key
    ascii_ = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode("ascii").lower()
    readable = re.sub(r"[^a-z0-9_-]+", "-", ascii_).strip("-_")[:40].rstrip("-_")  # no dot: "con.txt" is a device
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
    return f"{readable or 'run'}~{digest}"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _safe_rel(rel: Any) -> bool:
    """A path the record may name: relative, forward slashes, each part a plain name (never ``..``)."""
    return isinstance(rel, str) and 0 < len(rel) < 512 and all(_SAFE_PART.match(p) for p in rel.split("/"))


def read_manifest(root: Path) -> dict[str, list[Any]]:
    """The previous report's record: path -> [digest, size]; empty when there is none or it is unusable."""
    try:
        data = json.loads((root / MANIFEST).read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if _safe_rel(k) and isinstance(v, list) and len(v) == 2
            and isinstance(v[0], str) and type(v[1]) is int}


class Output:
    """Files written into a report folder, each only when it differs from what the previous report recorded."""

    def __init__(self, root: Path, old: dict[str, list[Any]]):
        self.root, self.old = root, old
        self.files: dict[str, list[Any]] = {}
        self.written: list[str] = []
        self._folders: set[Path] = set()

    def _same(self, rel: str, entry: list[Any] | None) -> bool:
        if entry is None or self.old.get(rel) != entry:
            return False
        try:
            return (self.root / rel).stat().st_size == entry[1]
        except OSError:
            return False

    def has(self, rel: str) -> bool:
        """True when the previous report wrote ``rel`` and it is still there whole (kept, not read)."""
        entry = self.old.get(rel)
        if entry is not None and self._same(rel, entry):
            self.files[rel] = entry
            return True
        return False

    def put(self, rel: str, data: bytes | str) -> bool:
        """Write ``rel`` unless the previous report wrote these very bytes there; True when written."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        entry = [digest(raw), len(raw)]
        if self.files.get(rel) == entry:  # put already by this report (a pair page's text a run page wrote)
            return False
        self.files[rel] = entry
        if self._same(rel, entry):
            return False
        path = self.root / rel
        if path.parent not in self._folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(path.parent)
        with atomic_write(path, "wb", hidden=True) as f:
            f.write(raw)
        self.written.append(rel)
        return True

    def merge(self, files: dict[str, list[Any]], written: list[str]) -> None:
        """Take in what another Output (a worker's) wrote and kept."""
        self.files.update(files)
        self.written.extend(written)

    def finish(self) -> list[str]:
        """Remove the files the previous report wrote that this one did not, and record this one's; return the
        paths removed."""
        removed = []
        for rel in sorted(set(self.old) - set(self.files)):
            path = self.root / rel
            try:
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(rel)
            except OSError:
                continue
        record = json.dumps({"files": dict(sorted(self.files.items()))}, separators=(",", ":")).encode()
        try:
            same = (self.root / MANIFEST).read_bytes() == record
        except OSError:
            same = False
        if not same:  # an unchanged report leaves even its record as it was
            with atomic_write(self.root / MANIFEST, "wb", hidden=True) as f:
                f.write(record)
        return removed


def relative(rel: str) -> str:
    """``rel`` as a path a page one folder down (runs/, pairs/) links to."""
    return "../" + rel


def ensure_folder(root: Path) -> None:
    """The report folder, made when missing; OSError when ``root`` is a file."""
    os.makedirs(root, exist_ok=True)
