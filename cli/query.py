"""trajcheck query: SQL over the ledger with DuckDB."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trajcheck.errors import LedgerError, QueryError

from .common import Exit, Format, emit, fail


def query(
    ledger_dir: Annotated[Path, typer.Argument(metavar="LEDGER", help="Ledger directory written by `score`.")],
    sql: Annotated[str, typer.Argument(help="SQL over the views `runs` and `steps`.")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output: table, json or csv.")] = Format.table,
) -> None:
    """Run SQL against a ledger (DuckDB, views `runs` and `steps`).

    Example: trajcheck query ledger/ "select run_id, effect_no_effect from runs order by 2 desc"

    Exit codes: 0 ok; 3 the ledger cannot be read or the SQL fails.
    """
    from trajcheck import ledger  # DuckDB loads when the command runs

    try:
        result = ledger.query(ledger_dir, sql)
    except LedgerError as exc:
        fail(str(exc), Exit.INPUT)
    except QueryError as exc:
        fail(f"query failed: {exc}", Exit.INPUT, "the views are `runs` and `steps`; `trajcheck columns` lists them")
    emit(result.columns, result.rows, fmt)
