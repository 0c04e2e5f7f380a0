"""trajcheck columns: the ledger's columns, from their one declaration."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .common import Exit, emit, fail
from .exits import exit_on_error
from .options import ColumnsFormat, ColumnsFormatOpt, Format


def values_link(table: str, column: str, md: bool) -> str:
    """For a reason column, where its values are listed (its section of docs/reasons.md); else ""."""
    from trajcheck.reasons import BY_COLUMN

    section = BY_COLUMN.get(f"{table}.{column}")
    if section is None:
        return ""
    return f" Values: [reasons.md#{section.key}]({section.link})." if md else f" Values: docs/{section.link}."


def markdown(table: str) -> str:
    """The Markdown table of one ledger table's columns (docs/columns.md)."""
    from trajcheck.schemas.ledger import TABLES  # pyarrow: loaded when the command runs

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
    from trajcheck.schemas.ledger import TABLES  # pyarrow: loaded when the command runs

    names = [table] if table else list(TABLES)
    for n in names:
        if n not in TABLES:
            fail(f"no table {n!r}", Exit.USAGE, f"tables: {', '.join(TABLES)}")
    if fmt is ColumnsFormat.md:
        for n in names:
            sys.stdout.write(f"### `{n}`\n\n{markdown(n)}\n")
        return
    rows = [(n, c.name, str(c.type), c.description + values_link(n, c.name, md=False))
            for n in names for c in TABLES[n]]
    emit(["table", "column", "type", "description"], rows, Format(fmt.value))
