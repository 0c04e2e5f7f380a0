"""trajcheck columns: the ledger's columns, from their one declaration."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..commands import values_link

from .common import emit, print_json
from .exits import exit_on_error
from .options import ColumnsFormat, ColumnsFormatOpt, Format


def markdown(table: str) -> str:
    """The Markdown table of one ledger table's columns (docs/columns.md)."""
    from ..schemas.ledger import TABLES  # pyarrow: loaded when the command runs

    lines = ["| column | type | description |", "|---|---|---|"]
    for c in TABLES[table]:
        text = c.description.replace('|', '/') + values_link(table, c.name, md=True)
        lines.append(f"| `{c.name}` | {c.type} | {text} |")
    return "\n".join(lines) + "\n"


@exit_on_error()
def columns(
    table: Annotated[Optional[str], typer.Option(help="Only this table: runs or steps.")] = None,
    fmt: ColumnsFormatOpt = ColumnsFormat.table,
) -> None:
    """List the ledger's tables and columns with their types and meaning.

    Example: trajcheck columns --table steps --format md
    """
    from ..commands import columns as declared  # pyarrow: loaded when the command runs

    rows = declared(table)
    if fmt is ColumnsFormat.md:
        for n in dict.fromkeys(r["table"] for r in rows):
            sys.stdout.write(f"### `{n}`\n\n{markdown(n)}\n")
        return
    if fmt is ColumnsFormat.json:
        print_json(rows)
        return
    cols = ["table", "column", "type", "description"]
    emit(cols, [[r[c] for c in cols] for r in rows], Format(fmt.value))
