"""trajcheck report: a static HTML report with screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..base.errors import LedgerError

from .common import Exit, emit, err, print_json
from .exits import Rule, exit_on_error
from .options import ByOpt, Format, FormatOpt, LedgerArg


@exit_on_error(Rule(OSError, Exit.INPUT, "cannot write the report: {error}", means="the report cannot be written"),
               raises=(LedgerError,))
def report(
    ledger_dir: LedgerArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder (index.html, runs/, assets/).")]
    = Path("report"),
    by: ByOpt = None,
    max_runs: Annotated[int, typer.Option(min=0, help="Runs whose pages get thumbnails (false claims, uncertain "
                                          "and failed runs first); every run gets a page.")] = 60,
    fmt: FormatOpt = Format.table,
) -> None:
    """Write a static HTML report of a ledger, a page per run.

    index.html has summary and comparison tables, a success chart
    and a sortable, filterable table of every run; runs/<n>.html with each run's story, its
    pre/post thumbnails and 200x200 region crops marked with the click point, the region and
    the changed box.

    Example: trajcheck report ledger/ --out report/
    """
    from ..commands import report as write  # Pillow and the frame decoder: when the command runs

    written = write(ledger_dir, out, by=by, max_runs=max_runs)
    if fmt is Format.table:
        err.print(f"report written: {written.index} ({written.runs} runs, {written.with_thumbnails} with "
                  "thumbnails)", highlight=False, markup=False)
    elif fmt is Format.json:
        print_json(written.to_json())
    else:
        emit(["index", "runs", "with_thumbnails"], [[str(written.index), written.runs, written.with_thumbnails]], fmt)
