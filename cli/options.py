"""The options and arguments several commands share, declared once.

A command names them as parameter types::

    def query(ledger_dir: LedgerArg, sql: ..., fmt: FormatOpt = Format.table) -> None: ...

Each ``--format`` variant's help text is made from its choices, so adding a choice is one line here.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.models import OptionInfo

from ..scoring.scoreargs import flag


class Format(str, enum.Enum):
    """Rows for people (a table) or for scripts (JSON, CSV): what :func:`trajcheck.cli.common.emit` prints."""

    table = "table"
    json = "json"
    csv = "csv"


class ColumnsFormat(str, enum.Enum):
    """`columns` also prints docs/columns.md's Markdown tables."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


class TimelineFormat(str, enum.Enum):
    """`timeline` is a story, not a table: text for people, JSON for scripts."""

    text = "text"
    json = "json"


class ExportFormat(str, enum.Enum):
    """`export` writes documents for papers and PRs."""

    md = "md"
    csv = "csv"
    latex = "latex"
    html = "html"
    json = "json"


class CheckFormat(str, enum.Enum):
    """`check` also writes a pull-request comment (md) and a CI test report (junit)."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"
    junit = "junit"


class FailuresFormat(str, enum.Enum):
    """`failures` also prints Markdown tables, for a pull request or a notebook."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


def format_help(choices: type[enum.Enum]) -> str:
    """The help text of a ``--format`` option: 'Output: table, json or csv.'"""
    names = [str(c.value) for c in choices]
    return "Output: " + (f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]) + "."


def _format_option(choices: type[enum.Enum]) -> OptionInfo:
    # typer copies an Annotated OptionInfo per command, so one instance can serve every command
    return typer.Option("--format", "-f", help=format_help(choices))


FormatOpt = Annotated[Format, _format_option(Format)]
ColumnsFormatOpt = Annotated[ColumnsFormat, _format_option(ColumnsFormat)]
TimelineFormatOpt = Annotated[TimelineFormat, _format_option(TimelineFormat)]
ExportFormatOpt = Annotated[ExportFormat, _format_option(ExportFormat)]
CheckFormatOpt = Annotated[CheckFormat, _format_option(CheckFormat)]
FailuresFormatOpt = Annotated[FailuresFormat, _format_option(FailuresFormat)]

#: The ledger a command reads (or compacts): the directory `score --out` wrote.
LedgerArg = Annotated[Path, typer.Argument(metavar="LEDGER", help="Ledger directory written by `score`.",
                                           show_default=False)]

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]

#: Writers of a ledger (`score`, `compact`) take its lock; this is how long they wait for another one.
WaitOpt = Annotated[float, typer.Option("--wait", min=0, help=flag("wait").help)]

InputFormatOpt = Annotated[Optional[str], typer.Option("--input-format", help=flag("input_format").help)]
MappingOpt = Annotated[Optional[Path], typer.Option("--mapping", help=flag("mapping").help)]

#: How runs are grouped (`compare`, `export`, `report`: the arms; `best-of`: the tasks), declared once.
ByOpt = Annotated[Optional[str], typer.Option("--by", help="Group the runs by this runs column or config.KEY: the arms "
                                              "of a comparison (`report` takes it when the ledger has both arms), "
                                              "or the tasks of best-of.")]

SuccessScoreOpt = Annotated[float, typer.Option(help="For runs without a verdict: an outcome.score at or above "
                                                "this counts as success.")]
