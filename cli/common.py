"""What every command shares: consoles, exit codes, output formats."""

from __future__ import annotations

import csv
import enum
import json
import sys
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from trajcheck.lock import LockWait

#: stdout is data; progress and diagnostics go to stderr.
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)  # one message per line: scripts grep them


class Exit(enum.IntEnum):
    """Exit codes, a documented contract (README, "Exit codes")."""

    OK = 0  # done, nothing to report
    FINDINGS = 1  # done, and some runs are invalid (score) or have errors (validate)
    USAGE = 2  # bad options or arguments
    INPUT = 3  # input that cannot be read at all: a path that does not exist, an unreadable ledger, bad SQL
    LOCKED = 4  # another writer held the ledger for longer than --wait; nothing was written


def wait_line(w: "LockWait") -> str:
    """The progress line of a writer waiting for a ledger's lock (or taking over a dead writer's)."""
    if w.took_over is not None:
        return f"took over the lock of {w.ledger} left by {w.took_over} (the process is gone)"
    who = str(w.holder) if w.holder is not None else "another writer"
    return f"waiting for {w.ledger}: locked by {who}; waited {w.waited:.0f}s of {w.limit:g}s (--wait)"


class Format(str, enum.Enum):
    table = "table"
    json = "json"
    csv = "csv"


def _plain(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(_plain(v), ensure_ascii=False)
    return str(v)


def emit(columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: Format, title: str | None = None) -> None:
    """Print rows as a rich table, JSON (a list of objects) or CSV, on stdout."""
    rows = list(rows)
    if fmt is Format.json:
        sys.stdout.write(json.dumps([dict(zip(columns, map(_plain, r))) for r in rows], ensure_ascii=False,
                                    indent=2) + "\n")
    elif fmt is Format.csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else (json.dumps(_plain(v)) if isinstance(v, (list, dict)) else v) for v in r])
    else:
        t = Table(title=title, show_lines=False, header_style="bold")
        for c in columns:
            t.add_column(c, overflow="fold")
        for r in rows:
            t.add_row(*(Text(_cell(v)) for v in r))  # Text: cell values are data, never rich markup
        out.print(t)


def fail(message: str, code: Exit, hint: str | None = None) -> None:
    """Print one error line (and a hint) to stderr and exit with ``code``."""
    import typer

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    if hint:
        err.print(f"[dim]hint:[/] {escape(hint)}", highlight=False)
    raise typer.Exit(int(code))
