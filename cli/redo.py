"""trajcheck redo: the runs to run again (missing, invalid, damaged), for a harness to re-run."""

from __future__ import annotations

import enum
import sys
from typing import Annotated

import typer

from ..base.errors import LedgerError

from .common import emit, err, print_json
from .exits import exit_on_error
from .options import Format, LedgerArg, format_help


class RedoFormat(str, enum.Enum):
    """Plain text for a harness's script (a task id a line, a tab and the run id when there is one), JSON, CSV."""

    text = "text"
    json = "json"
    csv = "csv"


@exit_on_error(raises=(LedgerError,))
def redo(
    ledger_dir: LedgerArg,
    fmt: Annotated[RedoFormat, typer.Option("--format", "-f", help=format_help(RedoFormat))] = RedoFormat.text,
) -> None:
    """List the runs to run again: the missing runs, then the invalid and damaged ones.

    Missing runs are those `score --expect TASKS` recorded as expected that the ledger lacks: one
    line per missing run, its task id alone. An invalid or damaged run is its task id, a tab and its
    run id; a run without a log (damage no_log) has no task id: an empty field, a tab and its run id.
    Without expected runs, only the invalid and damaged runs are listed (a note on stderr).

    Example: trajcheck redo ledger/ | cut -f1 | sort | uniq -c
    """
    from ..commands import redo as run_redo  # DuckDB loads when the command runs

    data = run_redo(ledger_dir).to_json()
    if fmt is RedoFormat.json:
        print_json(data)
    elif fmt is RedoFormat.csv:
        emit(["task_id", "run_id", "why"], [[r["task_id"], r["run_id"], r["why"]] for r in data["runs"]],
             Format.csv)
    else:
        sys.stdout.write("".join((r["task_id"] or "") + ("" if r["run_id"] is None else "\t" + r["run_id"]) + "\n"
                                 for r in data["runs"]))
    if not data["expected"]:
        err.print("no expected runs recorded (score --expect TASKS): missing runs cannot be listed",
                  highlight=False)
