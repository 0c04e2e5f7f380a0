"""The ledger's read side: DuckDB views ``runs`` and ``steps`` over the parts the manifest names.

Parts written by an older schema lack the columns added since; they read as typed nulls
(schemas/migrations.py), so every ledger from ``OLDEST_READABLE`` on is queried the same way. Likewise,
a problem slug retired since a part was written (trajcheck.base.problems ``RETIRED``) reads under the name that
replaced it in ``runs.error`` and ``runs.warnings``, and the macro ``has_problem(column, slug)`` matches a
slug or any name it replaced or was replaced by: a query written against either name works on any ledger.

:func:`query` reads only: it runs statements that read (:func:`check_reads_only`, on DuckDB's own parse of the
SQL) on a connection that can open no file but the ledger's parts and whose settings are locked.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..schemas.ledger import TABLES, arrow_schema

from ..base.errors import LedgerError, QueryError, UsageError
from .manifest import MANIFEST, read_manifest

if TYPE_CHECKING:
    import duckdb


def connect(ledger: str | os.PathLike[str], *, locked: bool = False) -> "duckdb.DuckDBPyConnection":
    """An in-memory DuckDB connection with views ``runs`` and ``steps`` over the ledger. ``locked``: the
    connection opens no file but the ledger's parts, loads no extension, and its settings cannot change
    (:func:`query`'s)."""
    root = Path(ledger)
    if not root.is_dir():
        raise LedgerError(f"{root}: no such ledger directory; create one with `trajcheck score RUNS --out {root}`")
    manifest = read_manifest(root)
    if manifest is None:
        raise LedgerError(f"{root}: no {MANIFEST}; this is not a trajcheck ledger")
    import duckdb  # loaded by the commands that query, not by `score`

    con = duckdb.connect(":memory:")
    parts: list[str] = []
    for table in TABLES:
        files = [str(root / p) for p in manifest.parts.get(table, [])]
        for f in files:
            if not Path(f).is_file():
                raise LedgerError(f"{f}: ledger part named by the manifest is missing")
        parts += files
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
    if locked:
        _lock(con, parts)
    return con


def _lock(con: "duckdb.DuckDBPyConnection", parts: list[str]) -> None:
    """No file but the ledger's ``parts`` (the views read them when queried), no extension, no change of
    settings. A DuckDB before 1.3 has no ``allowed_paths``: its views need the file system, which stays open
    there, and :func:`check_reads_only` alone keeps writes out."""
    import duckdb

    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    try:
        con.execute("SET allowed_paths = ?", [parts])
    except duckdb.CatalogException:  # no such setting: DuckDB < 1.3
        pass
    else:
        con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


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


#: The statements `query` runs. DESCRIBE, SHOW, SUMMARIZE, VALUES and PIVOT ... IN (...) parse as a SELECT;
#: an EXPLAIN runs only if what it explains is one (EXPLAIN ANALYZE executes it).
_READING_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})
#: The query nodes of DuckDB's parse tree (``json_serialize_sql``) that read. Since DuckDB 2 a SELECT's WITH
#: clause may hold an INSERT, UPDATE, DELETE or COPY, which parse as nodes of their own kind.
_READING_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
_EXPLAIN = re.compile(r"^\s*explain\s+(analy[sz]e\s+)?(\([^()]*\)\s*)?", re.IGNORECASE)
#: DuckDB's names of the statements people know by another.
_KNOWN_AS = {"MULTI": "PIVOT without IN (...)", "LOAD": "INSTALL or LOAD", "SET": "SET, RESET or USE",
             "VARIABLE_SET": "SET VARIABLE", "PRAGMA": "PRAGMA or IMPORT DATABASE", "CALL": "CALL or CHECKPOINT"}


def check_reads_only(con: "duckdb.DuckDBPyConnection", sql: str, who: str = "query") -> None:
    """UsageError unless ``sql`` holds statements and each of them only reads: a SELECT (or a DESCRIBE, SHOW,
    SUMMARIZE...) with nothing but SELECTs inside, or an EXPLAIN of one, as DuckDB parses them (its statement
    types, then its parse tree, on ``con``). QueryError if DuckDB cannot parse ``sql``; ``who`` (the command or
    option the SQL came from) begins the message."""
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if not statements:
        raise UsageError(f'{who}: the SQL holds no statement; e.g. trajcheck query LEDGER "select count(*) from runs"')
    for statement in statements:
        kind, text = statement.type.name, statement.query
        if kind == "EXPLAIN":
            inner = _EXPLAIN.sub("", text, count=1)
            kinds = [s.type.name for s in duckdb.extract_statements(inner)] if inner != text else []
            kind, text = (kinds[0], inner) if len(kinds) == 1 else ("EXPLAIN", text)
        if kind != "SELECT":
            name = _KNOWN_AS.get(kind, kind.replace("_", " "))
            _refuse(who, text, f"{'an' if name[0] in 'AEIOU' else 'a'} {name} statement")
        row = con.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
        tree = json.loads(row[0]) if row else {"error": True, "error_message": "no parse tree"}
        if tree.get("error"):  # a SELECT DuckDB cannot serialize is told apart from the others no further
            _refuse(who, text, f"a statement whose parts cannot be checked ({tree.get('error_message')})")
        other = sorted(_query_nodes(tree) - _READING_NODES)
        if other:
            _refuse(who, text, "a SELECT holding " + ", ".join(
                n.removesuffix("_NODE").removesuffix("_QUERY").replace("_", " ") for n in other))


def _refuse(who: str, sql: str, what: str) -> None:
    one = " ".join(sql.split()).rstrip(";")
    shown = one if len(one) <= 60 else one[:59] + "…"
    if who == "query":
        raise UsageError(f"query only reads the ledger, and `{shown}` is {what}; "
                         "to keep a result, redirect --format csv or json to a file")
    raise UsageError(f"{who}: `{shown}` is {what}; only a condition that reads the ledger is allowed")


def check_where(con: "duckdb.DuckDBPyConnection", where: str) -> None:
    """UsageError naming --where unless ``where`` is one condition over ``runs`` that only reads
    (:func:`check_reads_only`) and that DuckDB can run: the commands put it into their own SQL."""
    import duckdb

    probe = f"select count(*) from runs where {where}"
    try:
        check_reads_only(con, probe, "--where")
        if len(duckdb.extract_statements(probe)) != 1:
            raise UsageError("--where: one condition, not several statements")
        con.execute(probe).fetchall()
    except UsageError:
        raise
    except QueryError as exc:
        raise UsageError(f"--where: {exc}") from None
    except Exception as exc:  # noqa: BLE001  (a duckdb.Error: parser or binder)
        raise UsageError(f"--where: {_first_line(exc)}") from None


def _query_nodes(tree: object) -> set[str]:
    """The kinds of the query nodes anywhere in a parse tree of ``json_serialize_sql``."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            kind = item.get("type")
            if isinstance(kind, str) and kind.endswith("_NODE"):
                found.add(kind)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def query(ledger: str | os.PathLike[str], sql: str) -> QueryResult:
    """Run ``sql`` against the ledger's views and return the rows of its last statement. Only statements
    that read run (:func:`check_reads_only`: UsageError for an empty SQL or one that writes, attaches,
    installs, loads or sets), on a connection that opens no file but the ledger's parts."""
    import duckdb

    con = connect(ledger, locked=True)
    try:
        check_reads_only(con, sql)
        cur = con.execute(sql)
        if cur.description is None:
            return QueryResult([], [])
        cols = [d[0] for d in cur.description]
        return QueryResult(cols, cur.fetchall())
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    finally:
        con.close()


