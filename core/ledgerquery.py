"""The ledger's read side: DuckDB views ``runs`` and ``steps`` over the parts the manifest names.

Parts written by an older schema lack the columns added since; they read as typed nulls
(schemas/migrations.py), so every ledger from ``OLDEST_READABLE`` on is queried the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trajcheck.schemas.ledger import TABLES, arrow_schema

from .errors import LedgerError, QueryError
from .manifest import MANIFEST, read_manifest

if TYPE_CHECKING:
    import duckdb


def connect(ledger: str | os.PathLike[str]) -> "duckdb.DuckDBPyConnection":
    """An in-memory DuckDB connection with views ``runs`` and ``steps`` over the ledger."""
    root = Path(ledger)
    if not root.is_dir():
        raise LedgerError(f"{root}: no such ledger directory; create one with `trajcheck score RUNS --out {root}`")
    manifest = read_manifest(root)
    if manifest is None:
        raise LedgerError(f"{root}: no {MANIFEST}; this is not a trajcheck ledger")
    import duckdb  # loaded by the commands that query, not by `score`

    con = duckdb.connect(":memory:")
    for table in TABLES:
        files = [str(root / p) for p in manifest.parts.get(table, [])]
        for f in files:
            if not Path(f).is_file():
                raise LedgerError(f"{f}: ledger part named by the manifest is missing")
        if files:
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            source = f"read_parquet([{listed}], union_by_name=true)"
            have = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
            # Columns added since the oldest part was written read as typed nulls (schemas/migrations.py).
            missing = [f"CAST(NULL AS {_duckdb_type(f.type)}) AS {f.name}" for f in arrow_schema(table)
                       if f.name not in have]
            con.execute(f"CREATE VIEW {table} AS SELECT *{''.join(', ' + m for m in missing)} FROM {source}")
        else:
            con.register(f"_{table}_empty", arrow_schema(table).empty_table())
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
    return con


_DUCKDB_TYPES = {pa.string(): "VARCHAR", pa.bool_(): "BOOLEAN", pa.int32(): "INTEGER", pa.int64(): "BIGINT",
                 pa.float64(): "DOUBLE"}


def _duckdb_type(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return _duckdb_type(t.value_type) + "[]"
    return _DUCKDB_TYPES[t]


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        """One dict per row, keyed by column name."""
        return [dict(zip(self.columns, r)) for r in self.rows]

    def to_json(self) -> list[dict[str, Any]]:
        """What ``query --format json`` prints: :meth:`records`."""
        return self.records()


def query(ledger: str | os.PathLike[str], sql: str) -> QueryResult:
    """Run ``sql`` against the ledger's views and return every row."""
    import duckdb

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
