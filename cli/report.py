"""trajcheck report: a static HTML report with screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from ..base.errors import LedgerError

from ..store.lock import DEFAULT_WAIT, LedgerBusy
from .common import Exit, emit, err, print_json, wait_line
from .exits import ExitRule, exit_on_error
from .options import ByOpt, Format, FormatOpt, LedgerArg, QuietOpt
from ..base.words import count

if TYPE_CHECKING:
    from rich.progress import Progress


@exit_on_error(ExitRule(OSError, Exit.INPUT, "cannot write the report: {error}", means="the report cannot be written"),
               ExitRule(LedgerBusy, Exit.LOCKED,
                        hint="nothing was written; report again when it is done, or raise --wait",
                        means="another report held the folder for longer than --wait (nothing was written)"),
               raises=(LedgerError, LedgerBusy))
def report(
    ledger_dir: LedgerArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder (index.html, runs/, assets/).")]
    = Path("report"),
    by: ByOpt = None,
    max_runs: Annotated[Optional[int], typer.Option(min=0, help="Only this many runs get thumbnails (false "
                                                    "claims, uncertain and failed runs first). Default: every "
                                                    "run; every run gets a page.")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help="Worker processes (default: one per "
                                                "core).")] = None,
    quiet: QuietOpt = False,
    fmt: FormatOpt = Format.table,
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for another report into the same "
                                        "folder to finish (one at a time); then exit 4, having written "
                                        "nothing.")] = DEFAULT_WAIT,
    labels: Annotated[Optional[Path], typer.Option("--labels", help="Labels (JSON {run_id: {...}} or CSV, as "
                                                   "`agree` reads them): the judges page adds each judge's "
                                                   "precision, recall and false-success rate.")] = None,
) -> None:
    """Write a static HTML report of a ledger, a page per run.

    index.html has summary and comparison tables, a success chart and a sortable, filterable
    table of every run; runs/<run id>.html each run's story, its pre/post thumbnails and 200x200
    region crops marked with the click point, the region and the changed box; judges.html each
    judge of `score --judgments` against the evidence (and --labels). Thumbnails are
    cached by frame content, and files unchanged since the last report in the folder are not
    written again.

    Example: trajcheck report ledger/ --out report/
    """
    from ..commands import report as write  # Pillow and the frame decoder: when the command runs

    bar = _Bar(quiet)
    try:
        written = write(ledger_dir, out, by=by, max_runs=max_runs, jobs=jobs, on_progress=bar.tick, wait=wait,
                        on_wait=lambda w: err.print(wait_line(w), highlight=False, markup=False), labels=labels)
    finally:
        bar.stop()
    if fmt is Format.table:
        err.print(f"report written: {written.index} ({count(written.runs, 'run')}, {written.with_thumbnails} with "
                  f"thumbnails; {count(written.written, 'file')} written, {written.kept} unchanged, {written.removed} "
                  "removed)", highlight=False, markup=False)
    elif fmt is Format.json:
        print_json(written.to_json())
    else:
        emit(["index", "runs", "with_thumbnails", "written", "kept", "removed"],
             [[str(written.index), written.runs, written.with_thumbnails, written.written, written.kept,
               written.removed]], fmt)


class _Bar:
    """The progress bar on stderr (none with --quiet), started at the first run page written: an error before
    (an unreadable ledger) is then the one line printed."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress: "Progress | None" = None
        self.task: Any = None

    def tick(self, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("run pages"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                     console=err, transient=True)
            self.progress.start()
            self.task = self.progress.add_task("runs", total=total)
        self.progress.update(self.task, completed=done, total=total)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
