"""The ledger's manifest, and the digest index that lets an unchanged corpus be skipped without
loading pyarrow.

``manifest.json`` names the part files of each table and is the commit point of every write.
``digests.json`` holds, for the generation it names, each run's ``run_id``, ``status``,
``input_digest`` and ``inputs`` (the four columns a re-score compares); it is written just before the
manifest, from the previous index (less the runs dropped or rescored, plus the new ones) when that one
is of the previous generation, else from the committed runs parts. It is used only when its generation
is the manifest's, and otherwise the runs parts are read with Arrow instead.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..schemas.migrations import OLDEST_READABLE
from ..schemas.version import SCHEMA_VERSION, TABLE_NAMES

from ..base.atomic import atomic_write
from ..base.version import __version__
from ..base.errors import LedgerError

MANIFEST = "manifest.json"
DIGESTS = "digests.json"
LEDGER_FORMAT = "trajcheck.ledger"


@dataclass(frozen=True)
class Manifest:
    generation: int
    parts: dict[str, list[str]]  # table -> part paths relative to the ledger directory

    def to_json(self) -> dict[str, Any]:
        return {"format": LEDGER_FORMAT, "schema_version": SCHEMA_VERSION, "trajcheck_version": __version__,
                "generation": self.generation, "tables": self.parts}


def read_manifest(ledger: Path) -> Manifest | None:
    """The ledger's manifest, None when the directory holds no ledger yet."""
    path = ledger / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise LedgerError(f"{path}: unreadable ledger manifest ({exc}); score into a new directory") from None
    if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
        raise LedgerError(f"{path}: not a trajcheck ledger manifest")
    version = data.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise LedgerError(f"{path}: ledger schema version {version} is newer than this trajcheck's "
                          f"({SCHEMA_VERSION}); upgrade trajcheck to read it")
    if version < OLDEST_READABLE:
        raise LedgerError(f"{path}: ledger schema version {version} is older than the oldest this trajcheck "
                          f"reads ({OLDEST_READABLE}); score the runs into a new directory")
    tables = data.get("tables") or {}
    return Manifest(int(data.get("generation", 0)), {t: list(tables.get(t, [])) for t in TABLE_NAMES})


def write_digest_index(root: Path, generation: int, rows: list[list[Any]]) -> None:
    """Write ``digests.json`` for ``generation`` (temp file, then rename): rows of
    [run_id, status, input_digest, inputs, eval_final_verdict, verdict_source, false_claim, verdict_reason]."""
    with atomic_write(root / DIGESTS, "w", sync=True) as f:
        f.write(json.dumps({"generation": generation, "runs": rows}, separators=(",", ":")))


def previous_from_index(ledger: str | os.PathLike[str]) -> list[Any] | None:
    """What the ledger remembers of its runs, from ``digests.json``: [] when there is no ledger, None
    when the index is missing, unreadable or of another generation (read the runs parts instead)."""
    from ..scoring.incremental import Previous

    root = Path(ledger)
    manifest = read_manifest(root) if root.is_dir() else None
    if manifest is None:
        return []
    try:
        data = json.loads((root / DIGESTS).read_text("utf-8"))
        if data.get("generation") != manifest.generation:
            return None
        return [Previous.from_row(row[0], row[1], row[2], row[3]) for row in data["runs"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


#: The verdict columns of digests.json's rows (after run_id, status, input_digest, inputs).
INDEX_VERDICTS = ("eval_final_verdict", "verdict_source", "false_claim", "verdict_reason")


def verdicts_from_index(ledger: str | os.PathLike[str]) -> list[dict[str, Any]] | None:
    """Each run's status and verdict from ``digests.json`` (run_id, status, eval_final_verdict, verdict_source,
    false_claim), with no Arrow loaded; None when the index is missing, stale or older than its verdicts."""
    root = Path(ledger)
    manifest = read_manifest(root) if root.is_dir() else None
    if manifest is None:
        return None
    try:
        data = json.loads((root / DIGESTS).read_text("utf-8"))
        rows = data["runs"] if data.get("generation") == manifest.generation else None
        if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 4 + len(INDEX_VERDICTS)
                                                 for r in rows):
            return None
        return [{"run_id": r[0], "status": r[1], **dict(zip(INDEX_VERDICTS, r[4:]))} for r in rows]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
