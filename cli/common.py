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
    Exit.LOCKED: "another writer held the ledger for longer than `--wait`: nothing was written; run again",
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


#: Columns that name things (a run, a task, an arm): never wrapped in a table, at most cut to MAX_ID_WIDTH.
ID_COLUMNS = frozenset({"run_id", "task_id", "best_run", "arm", "baseline", "source", "slug", "source_format"})
MAX_ID_WIDTH = 40
#: A header up to this long is never folded.
MAX_HEADER_WIDTH = 14


def _header(name: str, width: int) -> str:
    """``name`` in lines of at most ``width`` characters, broken after an underscore or a slash where it must
    break (never inside a word; a header of several words keeps them on one line)."""
    if len(name) <= width:
        return name
    lines, line = [], ""
    for part in re.findall(r"[^_/]*[_/]|[^_/]+", name):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join([*lines, line])


def _cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its start and its end, with an ellipsis between (names
    that share a prefix, such as ``perceptual_verifier`` and ``perceptual_verifier_seed``, differ at the
    end)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _distinct_width(values: list[str], width: int) -> int:
    """The smallest width from ``width`` up at which the values, cut in the middle, are still told apart."""
    distinct = len(set(values))
    longest = max(map(len, values), default=0)
    while width < longest and len({_cut_middle(v, width) for v in values}) < distinct:
        width += 1
    return width


def emit(columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: Format, title: str | None = None) -> None:
    """Print rows as a rich table, JSON (a list of objects) or CSV, on stdout."""
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
        cells = [[_cell(v) for v in r] for r in rows]
        # a light box (rules under the title and the header, no vertical lines) leaves the columns the room
        t = Table(title=title, show_lines=False, header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
        ids = [i for i, c in enumerate(columns) if i == 0 or c in ID_COLUMNS]
        # every other column as wide as its widest value (at least 4): the identifiers get what is left
        heads: dict[int, str] = {}
        nat: dict[int, int] = {}
        for i, c in enumerate(columns):
            if i not in ids:  # a long header breaks after its underscores, not inside a word
                heads[i] = _header(c, max([4, *(len(r[i]) for r in cells)]))
                head = max(map(len, heads[i].split("\n")))  # a header line that cannot break stays whole
                nat[i] = max(head, min(MAX_HEADER_WIDTH, max([head, *(len(r[i]) for r in cells)])))
        # each column takes 3 more: its padding and the space between columns
        room = max(12, (out.width - sum(w + 3 for w in nat.values())) // max(1, len(ids)) - 3)
        for i, c in enumerate(columns):
            if i in ids:  # one line each, cut in the middle only past the room there is, and never so far
                # that two names read the same
                w = _distinct_width([r[i] for r in cells], min(max([len(c), *(len(r[i]) for r in cells)]),
                                                               MAX_ID_WIDTH, room))
                for r in cells:
                    r[i] = _cut_middle(r[i], w)
                t.add_column(c, no_wrap=True, overflow="ellipsis", min_width=w, max_width=w)
            else:
                t.add_column(heads[i], overflow="fold", min_width=nat[i])
        for r in cells:
            t.add_row(*(Text(v) for v in r))  # Text: cell values are data, never rich markup
        out.print(t)


def print_json(data: Any) -> None:
    """``--format json``: a library function's result (:func:`trajcheck.commands.plain`) on stdout, as is."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def print_problems(problems: Iterable["Problem"]) -> None:
    """One stderr line per problem of the input: its severity, location, message, hint and slug."""
    for p in problems:
        err.print(f"[yellow]{p.severity}:[/] {escape(str(p))}", highlight=False)


def fail(message: str, code: Exit, hint: str | None = None) -> NoReturn:
    """Print one error line (and a hint) to stderr and exit with ``code``."""
    import typer

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    if hint:
        err.print(f"[dim]hint:[/] {escape(hint)}", highlight=False)
    raise typer.Exit(int(code))
