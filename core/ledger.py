"""The Parquet ledger: a directory of table parts named by a manifest.

Layout::

    LEDGER/manifest.json         which part files make up each table (the commit point)
    LEDGER/runs/part-<gen>.parquet
    LEDGER/steps/part-<gen>.parquet

A write puts new parts under temporary names, renames them into place, then
replaces ``manifest.json`` atomically (write to a temp file, ``os.replace``). A
reader only ever sees the parts the manifest names, so an interrupted command
leaves the previous ledger whole. Read the tables through :func:`connect` (DuckDB
views ``runs`` and ``steps``) or ``trajcheck query``, never by file name.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from trajcheck.schemas.ledger import SCHEMA_VERSION, TABLES, arrow_schema

from . import __version__
from .errors import LedgerError, QueryError

MANIFEST = "manifest.json"
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
    if data.get("schema_version") != SCHEMA_VERSION:
        raise LedgerError(f"{path}: ledger schema version {data.get('schema_version')} is not this trajcheck's "
                          f"({SCHEMA_VERSION}); score into a new directory")
    tables = data.get("tables") or {}
    return Manifest(int(data.get("generation", 0)), {t: list(tables.get(t, [])) for t in TABLES})


def _to_table(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = arrow_schema(table)
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(columns, schema=schema)


def _read_parts(ledger: Path, parts: list[str], table: str) -> pa.Table:
    schema = arrow_schema(table)
    tables = []
    for rel in parts:
        try:
            t = pq.read_table(ledger / rel)
        except (OSError, pa.ArrowException) as exc:
            raise LedgerError(f"{ledger / rel}: unreadable ledger part ({exc})") from None
        tables.append(t.select(schema.names).cast(schema))
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables)


def write(ledger: str | os.PathLike[str], runs: list[dict[str, Any]], steps: list[dict[str, Any]]) -> Manifest:
    """Add scored runs to the ledger at ``ledger`` (created if needed).

    A run already in the ledger is replaced by its new rows (runs are keyed by
    ``run_id``); every other row is kept.
    """
    root = Path(ledger)
    if root.exists() and not root.is_dir():
        raise LedgerError(f"{root} exists and is not a directory")
    root.mkdir(parents=True, exist_ok=True)
    old = read_manifest(root)
    if old is None and any(p.name != MANIFEST for p in root.iterdir() if not p.name.startswith(".")):
        if not all(p.is_dir() and p.name in TABLES for p in root.iterdir() if not p.name.startswith(".")):
            raise LedgerError(f"{root} is not empty and holds no trajcheck ledger; choose a new directory")
    generation = (old.generation if old else 0) + 1
    new_ids = pa.array(sorted({r["run_id"] for r in runs}), type=pa.string())
    parts: dict[str, list[str]] = {}
    written: list[Path] = []
    try:
        for table, rows in (("runs", runs), ("steps", steps)):
            fresh = _to_table(table, rows)
            if old and old.parts.get(table):
                kept = _read_parts(root, old.parts[table], table)
                if len(new_ids):
                    import pyarrow.compute as pc
                    kept = kept.filter(pc.invert(pc.is_in(kept["run_id"], value_set=new_ids)))
                fresh = pa.concat_tables([kept, fresh])
            (root / table).mkdir(exist_ok=True)
            rel = f"{table}/part-{generation:06d}.parquet"
            tmp = root / f"{rel}.{uuid.uuid4().hex}.tmp"
            pq.write_table(fresh, tmp, compression="zstd", row_group_size=64 * 1024)
            os.replace(tmp, root / rel)
            written.append(root / rel)
            parts[table] = [rel]
        manifest = Manifest(generation, parts)
        tmp = root / f"{MANIFEST}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n", "utf-8")
        os.replace(tmp, root / MANIFEST)
    except BaseException:
        for p in written:  # the old manifest still names the old parts; drop what it does not name
            p.unlink(missing_ok=True)
        for p in root.glob("**/*.tmp"):
            p.unlink(missing_ok=True)
        raise
    _sweep(root, manifest)
    return manifest


def _sweep(root: Path, manifest: Manifest) -> None:
    """Remove part files the committed manifest no longer names."""
    keep = {root / p for parts in manifest.parts.values() for p in parts}
    for table in TABLES:
        for p in (root / table).glob("*"):
            if p not in keep and (p.suffix in (".parquet", ".tmp")):
                p.unlink(missing_ok=True)


def connect(ledger: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with views ``runs`` and ``steps`` over the ledger."""
    root = Path(ledger)
    if not root.is_dir():
        raise LedgerError(f"{root}: no such ledger directory; create one with `trajcheck score RUNS --out {root}`")
    manifest = read_manifest(root)
    if manifest is None:
        raise LedgerError(f"{root}: no {MANIFEST}; this is not a trajcheck ledger")
    con = duckdb.connect(":memory:")
    for table in TABLES:
        files = [str(root / p) for p in manifest.parts.get(table, [])]
        for f in files:
            if not Path(f).is_file():
                raise LedgerError(f"{f}: ledger part named by the manifest is missing")
        if files:
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listed}], union_by_name=true)")
        else:
            con.register(f"_{table}_empty", arrow_schema(table).empty_table())
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
    return con


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]


def query(ledger: str | os.PathLike[str], sql: str) -> QueryResult:
    """Run ``sql`` against the ledger's views and return every row."""
    con = connect(ledger)
    try:
        cur = con.execute(sql)
        if cur.description is None:
            return QueryResult([], [])
        cols = [d[0] for d in cur.description]
        return QueryResult(cols, cur.fetchall())
    except duckdb.Error as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise QueryError(msg) from None
    finally:
        con.close()
