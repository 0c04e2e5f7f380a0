"""The ledger's read side: DuckDB views ``runs`` and ``steps`` over the parts the manifest names.

Parts written by an older schema lack the columns added since; they read as typed nulls
(schemas/migrations.py), so every ledger from ``OLDEST_READABLE`` on is queried the same way. Likewise,
a problem slug retired since a part was written (trajcheck.base.problems ``RETIRED``) reads under the name that
replaced it in ``runs.error`` and ``runs.warnings``, and the macro ``has_problem(column, slug)`` matches a
slug or any name it replaced or was replaced by: a query written against either name works on any ledger.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..schemas.ledger import TABLES, arrow_schema

from ..base.errors import LedgerError, QueryError
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
            renamed = _current_slugs(have) if table == "runs" else ""
            con.execute(f"CREATE VIEW {table} AS SELECT *{renamed}{''.join(', ' + m for m in missing)} FROM {source}")
        else:
            # an empty table of the declared columns, typed in SQL: registering an empty Arrow table instead
            # makes duckdb import pandas (a quarter of a second of every command on a ledger without steps)
            typed = ", ".join(f"CAST(NULL AS {_duckdb_type(f.type)}) AS {f.name}" for f in arrow_schema(table))
            con.execute(f"CREATE VIEW {table} AS SELECT {typed} WHERE false")
    con.execute(_has_problem_macro())
    return con


def _sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _renamed(x: str) -> str:
    """SQL: the stored problem text ``x`` (one problem, or several joined by "; ") with each retired slug
    replaced by its successor; a slug split in two is told apart by the message it was stored with."""
    from ..base.problems import RETIRED

    for r in RETIRED:
        old = re.escape(f"[{r.slug}]")
        if not r.when:
            pattern, by = _sql(old), _sql(f"[{r.now[0]}]")
            x = f"regexp_replace({x}, {pattern}, {by}, 'g')"
        for new, when in zip(r.now, r.when):  # the message, then its hint (no brackets), then the slug
            pattern, by = _sql("(" + when + r"[^\[\]]*)" + old), _sql(r"\1" + f"[{new}]")
            x = f"regexp_replace({x}, {pattern}, {by}, 'g')"
    return x


def _current_slugs(have: set[str]) -> str:
    """The ``REPLACE`` clause reading runs.error and runs.warnings under the current slugs."""
    import duckdb

    cols = []
    if "error" in have:
        cols.append(f"{_renamed('error')} AS error")
    if "warnings" in have:
        new_lambda = tuple(int(p) for p in duckdb.__version__.split(".")[:2]) >= (1, 3)  # `->` is deprecated
        fn = f"lambda w: {_renamed('w')}" if new_lambda else f"w -> {_renamed('w')}"
        cols.append(f"list_transform(warnings, {fn}) AS warnings")
    return f" REPLACE ({', '.join(cols)})" if cols else ""


def _has_problem_macro() -> str:
    """``has_problem(x, slug)``: does ``x`` (runs.error, runs.warnings, or any problem text) hold a problem
    of ``slug``, of a slug it replaced, or of one that replaced it (trajcheck.base.problems ``RETIRED``)?"""
    from ..base.problems import ALIASES

    groups: dict[str, set[str]] = {}
    for old, now in ALIASES.items():
        for name in (old, *now):
            groups.setdefault(name, {name}).update((old, *now) if name == old else (old, name))
    cases = " ".join(f"WHEN {_sql(name)} THEN {_sql('|'.join(sorted(g)))}" for name, g in sorted(groups.items()))
    return (f"CREATE TEMP MACRO has_problem(x, slug) AS regexp_matches(CAST(x AS VARCHAR), "
            f"'\\[(' || CASE slug {cases} ELSE regexp_escape(slug) END || ')\\]')")


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


