"""What every command shares: consoles, exit codes, printing rows, errors and problems."""

from __future__ import annotations

import csv
import enum
import json
import re
import sys
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, Sequence

from rich.console import Console
from rich.markup import escape
from rich import box
from rich.table import Table
from rich.text import Text

from ..base.safetext import clean as clean  # the terminal and the report escape text from a run alike

from .options import Format

if TYPE_CHECKING:
    from ..base.errors import Problem
    from ..store.lock import LockWait

#: stdout is data; progress and diagnostics go to stderr.
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)  # one message per line: scripts grep them


class Exit(enum.IntEnum):
    """Exit codes, a documented contract: the README's "Exit codes" table is generated from their meanings
    and the commands' exit rules (cli/exits.py, ``python -m devtools.exitdoc``)."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    INPUT = 3
    LOCKED = 4

    @property
    def meaning(self) -> str:
        """What the code says, whichever command exits with it."""
        return _MEANINGS[self]


_MEANINGS = {
    Exit.OK: "done, nothing to report",
    Exit.FINDINGS: "done, with findings: the command did its work and found runs or files to look at",
    Exit.USAGE: "usage error: an unknown option or value",
    Exit.INPUT: "input that cannot be read at all, or a file that cannot be written",
    Exit.LOCKED: "another writer held the ledger (a report, its folder) for longer than `--wait`: nothing was "
                 "written; run again",
}


def wait_line(w: "LockWait") -> str:
    """The progress line of a writer waiting for a ledger's lock (or taking over a dead writer's)."""
    if w.took_over is not None:
        return f"took over the lock of {w.ledger} left by {w.took_over} (the process is gone)"
    who = str(w.holder) if w.holder is not None else "another writer"
    return f"waiting for {w.ledger}: locked by {who}; waited {w.waited:.0f}s of {w.limit:g}s (--wait)"


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


def literal(text: Any) -> str:
    """``text`` from a run for a string that rich reads as markup: :func:`clean`, then its brackets escaped."""
    return escape(clean(text))


def data_text(text: Any, style: str = "") -> Text:
    """``text`` from a run as a rich Text: shown as written, never as markup or control codes."""
    return Text(clean(text), style=style)


def say(text: Any, style: str = "") -> None:
    """One line for people on stdout, from text that may hold a run's: shown as written (no markup, control
    codes visible) and wrapped between words at the terminal's width."""
    out.print(data_text(text, style), soft_wrap=False, highlight=False)


def cleaned(data: Any) -> Any:
    """``data`` (a command's JSON result) with every string :func:`clean`: what a renderer draws from."""
    if isinstance(data, str):
        return clean(data)
    if isinstance(data, dict):
        return {k: cleaned(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [cleaned(v) for v in data]
    return data


#: Columns that name things (a run, a task, a rule, an arm): printed whole, never wrapped nor cut.
ID_COLUMNS = frozenset({"run_id", "task_id", "best_run", "arm", "baseline", "source", "slug", "source_format",
                        "rule", "scope", "run", "task", "group", "ledger", "index", "pair", "column", "table", "format",
                        "field", "file", "reader"})
#: A column that wraps keeps at least this width (or its widest value, if narrower): narrower than that
#: the table prints one record per block.
MIN_WRAP_WIDTH = 10


def _header(name: str, width: int, spaces: bool = False) -> str:
    """``name`` in lines of at most ``width`` characters, broken after an underscore or a slash where it must
    break (never inside a word; a header of several words keeps them on one line unless ``spaces``)."""
    if len(name) <= width:
        return name
    lines, line = [], ""
    for part in re.findall(r"[^_/ ]*[_/ ]|[^_/ ]+" if spaces else r"[^_/]*[_/]|[^_/]+", name):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join([*lines, line])


def _longest_line(text: str) -> int:
    return max(map(len, text.split("\n")), default=0)


def _widths(columns: Sequence[str], cells: list[list[str]], ids: set[int], room: int, spaces: bool = False
            ) -> tuple[list[str], list[int]] | None:
    """Each column's header and width in a table at most ``room`` wide, or None when the identifiers whole and
    the other columns at their least width do not fit (then one record per block). A header breaks after its
    underscores and slashes, and (``spaces``) between its words too."""
    heads, want, least = [], [], []
    for i, c in enumerate(columns):
        values = [_longest_line(r[i]) for r in cells]
        if i in ids:
            heads.append(c)
            want.append(max([len(c), *values]))
            least.append(want[-1])
            continue
        heads.append(_header(c, max([4, *values]), spaces))
        head = _longest_line(heads[-1])  # a header line that cannot break stays whole
        want.append(max([head, *values]))
        least.append(max(head, min(want[-1], MIN_WRAP_WIDTH)))
    room -= 3 * len(columns) - 1  # a space each side of a column (none at the table's edges) and between two
    if sum(least) > room:
        return None
    if sum(want) <= room:
        return heads, want
    # the widest wrapping columns give way first: each column at most ``cap`` wide (never under its least),
    # ``cap`` the largest that fits, then what room is left goes a character each to the columns it held back
    lo, hi = 0, max(want)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(max(w0, min(w1, mid)) for w0, w1 in zip(least, want)) <= room:
            lo = mid
        else:
            hi = mid - 1
    widths = [max(w0, min(w1, lo)) for w0, w1 in zip(least, want)]
    spare = room - sum(widths)
    for j in range(len(widths)):
        if spare > 0 and widths[j] < want[j]:
            widths[j] += 1
            spare -= 1
    return heads, widths


def _blocks(columns: Sequence[str], cells: list[list[str]], ids: set[int], title: str | None) -> None:
    """One record per block, a field a line (``name  value``): for a terminal too narrow for the table. An
    identifier is never broken; other values wrap under themselves."""
    import textwrap

    if title:
        out.print(data_text(title, "bold"))
    label = max(map(len, columns), default=0)
    room = max(20, out.width - label - 2)
    for r in cells:
        out.print()
        for i, c in enumerate(columns):
            value = r[i] if i in ids else "\n".join(
                textwrap.fill(line, room, break_long_words=True, break_on_hyphens=False) or ""
                for line in r[i].split("\n"))
            body = value.replace("\n", "\n" + " " * (label + 2))
            line = Text(f"{c:<{label}}  ", style="bold" if i == 0 else "dim")
            line.append(body, style="bold" if i == 0 else "")
            out.print(line, soft_wrap=True)
    out.print()  # as after a table: what follows starts apart


def emit(columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: Format, title: str | None = None) -> None:
    """Print rows as a rich table, JSON (a list of objects) or CSV, on stdout. The table never cuts an
    identifier (the first column, and those in :data:`ID_COLUMNS`): the other columns wrap, and where even
    that does not fit the terminal, each record is a block of lines."""
    rows = list(rows)
    if fmt is Format.json:
        sys.stdout.write(json.dumps([dict(zip(columns, map(_plain, r))) for r in rows], ensure_ascii=False,
                                    indent=2) + "\n")
    elif fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow(["" if v is None else (json.dumps(_plain(v)) if isinstance(v, (list, dict)) else v)
                             for v in r])
    else:
        columns = [clean(c) for c in columns]
        cells = [[clean(_cell(v)) for v in r] for r in rows]
        ids = {i for i, c in enumerate(columns) if i == 0 or c in ID_COLUMNS}
        # headers of several words on one line if the table fits so, else broken between them too
        layout = _widths(columns, cells, ids, out.width) or _widths(columns, cells, ids, out.width, spaces=True)
        if layout is None:
            _blocks(columns, cells, ids, title)
            return
        heads, widths = layout
        # a light box (rules under the title and the header, no vertical lines) leaves the columns the room
        t = Table(title=None if title is None else data_text(title), show_lines=False, header_style="bold",
                  box=box.SIMPLE_HEAD, pad_edge=False)
        for i, (head, w) in enumerate(zip(heads, widths)):
            t.add_column(head, no_wrap=i in ids, overflow="fold", width=w)
        for r in cells:
            t.add_row(*(Text(v) for v in r))  # Text: cell values are data, never rich markup
        out.print(t, soft_wrap=True)


def print_json(data: Any) -> None:
    """``--format json``: a library function's result (:func:`trajcheck.commands.plain`) on stdout, as is."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def print_problems(problems: Iterable["Problem"]) -> None:
    """One stderr line per problem of the input: its severity, location, message, hint and slug."""
    for p in problems:
        err.print(f"[yellow]{p.severity}:[/] {literal(p)}", highlight=False)


def fail(message: str, code: Exit, hint: str | None = None) -> NoReturn:
    """Print one error line (and a hint) to stderr and exit with ``code``."""
    import typer

    err.print(f"[bold red]error:[/] {literal(message)}", highlight=False, markup=True)
    if hint:
        err.print(f"[dim]hint:[/] {literal(hint)}", highlight=False)
    raise typer.Exit(int(code))
