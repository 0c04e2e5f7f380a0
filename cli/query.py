"""trajcheck query: SQL over the ledger with DuckDB."""

from __future__ import annotations

from typing import Annotated

import typer

from ..base.errors import LedgerError, QueryError

from .common import Exit, emit, print_json
from .exits import ExitOutcome, exit_on_error
from .options import Format, FormatOpt, LedgerArg


@exit_on_error(ExitOutcome(Exit.USAGE, "the SQL holds no statement, or one that does more than read (COPY, CREATE, "
                                   "DROP, INSERT, ATTACH, INSTALL, LOAD, SET...)"),
               raises=(LedgerError, QueryError))
def query(
    ledger_dir: LedgerArg,
    sql: Annotated[str, typer.Argument(help="SQL over the views `runs` and `steps`.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Run SQL against a ledger (DuckDB, views `runs` and `steps`), read only.

    A statement that writes, attaches, installs, loads or changes a setting is refused, and no file but the
    ledger's can be opened.

    Example: trajcheck query ledger/ "select run_id, effect_no_effect from runs order by 2 desc"
    """
    from ..commands import query as run  # DuckDB loads when the command runs

    result = run(ledger_dir, sql)
    if fmt is Format.json:
        print_json(result.to_json())
        return
    emit(result.columns, result.rows, fmt)
