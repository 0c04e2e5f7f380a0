"""Which runs need scoring: the ledger's memory of each run against what is on disk now.

Light on purpose (no analyzers, no DuckDB): when nothing changed, ``trajcheck score``
answers from here without loading the scoring pipeline.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..base import remote
from .digest import file_manifest, input_digest, judgments_entry, outside_again
from ..readers.discovery import RunRef


@dataclass(frozen=True)
class Previous:
    """What a ledger remembers of a run it holds: enough to tell whether it changed."""

    run_id: str
    status: str
    input_digest: str | None
    root: str | None
    files: dict[str, list[Any]]

    @staticmethod
    def from_row(run_id: str, status: str, digest: str | None, inputs: str | None) -> "Previous":
        try:
            data = json.loads(inputs) if inputs else {}
        except ValueError:
            data = {}
        return Previous(run_id, status, digest, data.get("root"), data.get("files") or {})


@dataclass
class Plan:
    todo: list[RunRef]  # runs to score
    skipped: list[str] = field(default_factory=list)  # run_ids whose digest is unchanged
    removed: list[str] = field(default_factory=list)  # run_ids whose directory is gone from a scored folder
    refs: dict[str, RunRef] = field(default_factory=dict)  # run_id -> the skipped runs' refs
    #: where a run to score was scored before: its key -> the run_id the ledger holds for it (a run read again
    #: under another id, a folder without a log whose log is back, leaves no row of its old id behind)
    replaced: dict[str, str] = field(default_factory=dict)

    @property
    def known(self) -> dict[str, str]:
        """run_id -> path of the skipped runs."""
        return {rid: str(ref.path) for rid, ref in self.refs.items()}


def _under(path: str, roots: list[str]) -> bool:
    sep = "/" if remote.is_url(path) else os.sep
    return any(path == r or path.startswith(r.rstrip(sep) + sep) for r in roots)


def _manifest(ref: RunRef, old: Previous) -> dict[str, list[Any]]:
    """The run's manifest now, as scoring records it: its folder's files and the files outside it that its frames
    came from (found again from its folder, inside the folder being scored)."""
    files = file_manifest(Path(ref.path), old.files)
    files.update(outside_again(ref.run_dir, old.files, ref.root))
    return files


def plan(paths: Iterable[Any], refs: list[RunRef], previous: Iterable[Previous] | None, fingerprint: str,
         opts: Any = None) -> Plan:
    """Split ``refs`` into runs to score and unchanged runs to skip; find the runs a ledger holds
    under ``paths`` whose directory is gone. Without ``previous``, everything is scored. ``opts`` (the scoring
    options) gives each run's judgments, part of its digest."""
    if previous is None:
        return Plan(list(refs))
    out = Plan([])
    by_root = {p.root: p for p in previous if p.root}
    roots = [str(p).rstrip("/") if remote.is_url(p) else os.path.abspath(p) for p in paths]
    found = {r.key for r in refs}
    out.removed = sorted(p.run_id for root, p in by_root.items() if _under(root, roots) and root not in found)
    for ref in refs:
        old = by_root.get(ref.key)
        if ref.url is None and old is not None and old.status == "ok" and old.input_digest and \
                old.input_digest == input_digest({**_manifest(ref, old), **judgments_entry(opts, old.run_id)},
                                                 ref.reader, fingerprint):
            out.skipped.append(old.run_id)
            out.refs[old.run_id] = ref
        else:
            out.todo.append(ref)
            if old is not None:
                out.replaced[ref.key] = old.run_id
    return out
