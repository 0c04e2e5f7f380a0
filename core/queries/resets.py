"""``reset_failed`` from the first frames: a check across runs, kept in the ledger's damage columns.

A run's other damage kinds come from its own files (:mod:`trajcheck.analyzers.damage`, when it is scored, and its
verdict never depends on the batch). A first frame that is not the task's start state is known only against the
task's other repeats (:mod:`trajcheck.analyzers.startframe`), so it is checked where runs are grouped: over the
whole ledger, after each ``score`` that committed something (:func:`trajcheck.api.score`), by :func:`apply`.

Repeats are runs of the same task under the same config, as ``flaky`` groups them without ``--repeat-key``: equal
``task_id`` and equal ``config`` (a run without one has the empty one); only scored runs (status ``ok``) whose
first step has a pre frame with a pHash take part. A run already damaged by its own log keeps that damage; a run
the check flagged earlier is cleared or updated when its group changes (a later score added or removed
repeats). The rows that change are written again as they were, with ``damage`` and ``damage_evidence`` new and
what the damage decides judged again from the rows by the functions that judged it at score time
(:func:`trajcheck.analyzers.control.of_row`, :func:`trajcheck.analyzers.process.of_rows`): ``failure_control``,
``decisive_control`` (a failed reset is not the agent's doing), ``process_score`` and ``process_evidence`` (its
steps count neither way). Their input digests are kept, so nothing is rescored for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..analyzers.startframe import EVIDENCE_PREFIX, FirstFrame, off_start
from ..base.hashing import Hash64
from ..base.reasons import Damage
from ..store import ledger

RUN_COLUMNS = ("run_id", "task_id", "config", "status", "damage", "damage_evidence")
STEP_COLUMNS = ("run_id", "step_index", "frame_pre_phash", "frame_pre")


def _canonical(config: str | None) -> str:
    if not config:
        return "{}"
    try:
        return json.dumps(json.loads(config), sort_keys=True)
    except ValueError:
        return config


def _read(root: Path, table: str, columns: tuple[str, ...], ids: set[str] | None = None) -> list[dict[str, Any]]:
    """``columns`` of ``table``'s rows (of the runs ``ids``; all without), read with pyarrow from the parts the
    manifest names (a column an older part lacks reads as None): no DuckDB for a pass every score makes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    manifest = ledger.read_manifest(root)
    rows: list[dict[str, Any]] = []
    for rel in (manifest.parts.get(table, []) if manifest else []):
        have = set(pq.read_schema(root / rel).names)
        data = pq.read_table(root / rel, columns=[c for c in columns if c in have] if columns else None)
        if ids is not None:
            data = data.filter(pc.is_in(data["run_id"], value_set=pa.array(sorted(ids), type=pa.string())))
        rows += [{c: r.get(c) for c in columns} if columns else r for r in data.to_pylist()]
    return rows


def _hash(text: str | None) -> Hash64 | None:
    """A first frame's pHash as the ledger stores it (hex), None when there is none or it is not one."""
    try:
        return Hash64.from_hex(text) if text else None
    except ValueError:
        return None


def changes(ledger_dir: str | os.PathLike[str]) -> dict[str, tuple[str | None, str | None]]:
    """The runs whose damage the first-frame check changes: run id -> (damage, evidence) as they should be."""
    root = Path(ledger_dir)
    runs = [r for r in _read(root, "runs", RUN_COLUMNS) if r["status"] == "ok"]
    by_group: dict[tuple[str, str], list[str]] = {}
    for r in runs:
        if r["task_id"] is not None:
            by_group.setdefault((r["task_id"], _canonical(r["config"])), []).append(r["run_id"])
    repeated = {rid for ids in by_group.values() if len(ids) > 2 for rid in ids}
    found: dict[str, str] = {}
    if repeated:
        first: dict[str, tuple[int, str | None, str | None]] = {}
        for s in _read(root, "steps", STEP_COLUMNS, repeated):
            if s["run_id"] not in first or s["step_index"] < first[s["run_id"]][0]:
                first[s["run_id"]] = (s["step_index"], s["frame_pre_phash"], s["frame_pre"])
        for ids in by_group.values():
            group = [FirstFrame(rid, h, first[rid][2]) for rid in sorted(ids) if rid in first
                     for h in [_hash(first[rid][1])] if h is not None]
            if len(group) > 2:
                found.update(off_start(group))
    out: dict[str, tuple[str | None, str | None]] = {}
    for r in runs:
        damage, evidence = r["damage"], r["damage_evidence"]
        ours = damage == Damage.RESET_FAILED and (evidence or "").startswith(EVIDENCE_PREFIX)
        if damage is not None and not ours:
            continue  # damaged by its own log: that damage comes first
        new = found.get(r["run_id"])
        want = (str(Damage.RESET_FAILED), new) if new else (None, None)
        if want != (damage, evidence):
            out[r["run_id"]] = want
    return out


def _rejudged(run: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """``run`` with what its damage decides judged again from its rows, by the functions that judged it when it was
    scored: whether its failure and decisive error were the agent's to avoid (a failed reset is not), and its
    process score (a failed reset's steps count neither way)."""
    from ..analyzers import control, process

    run["failure_control"], run["decisive_control"] = control.of_row(run)
    found = process.of_rows(run, steps)
    run["process_score"], run["process_evidence"] = found.score, found.evidence()
    return run


def apply(ledger_dir: str | os.PathLike[str]) -> int | None:
    """Write the first-frame check's damage into the ledger's runs: a new generation, whose number is returned;
    None when nothing changed and nothing was written. The ledger's lock is held from the read to the commit, so
    a writer in between cannot have its rows replaced by older ones."""
    from ..store.lock import DEFAULT_WAIT

    root = Path(ledger_dir)
    lock = ledger.lock(root, DEFAULT_WAIT)
    try:
        writer = ledger.Writer(root, lock)  # releases the lock when its ``with`` ends
    except BaseException:
        lock.release()
        raise
    with writer:
        todo = changes(root)
        if not todo:
            writer.abort()
            return None
        by_run: dict[str, list[dict[str, Any]]] = {}
        for s in _read(root, "steps", (), set(todo)):
            by_run.setdefault(s["run_id"], []).append(s)
        for r in _read(root, "runs", (), set(todo)):
            r["damage"], r["damage_evidence"] = todo[r["run_id"]]
            steps = by_run.get(r["run_id"], [])
            writer.add(_rejudged(r, steps), steps)
        return writer.commit().generation
