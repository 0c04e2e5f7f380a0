"""trajcheck compact: merge a ledger's parts into one file per table."""

from __future__ import annotations

import typer

from ..base.errors import LedgerError
from ..store.lock import DEFAULT_WAIT, LedgerBusy

from .common import Exit, emit, err, print_json, wait_line
from .exits import ExitRule, exit_on_error
from .options import Format, FormatOpt, LedgerArg, WaitOpt

#: What compact could not do, said of a ledger that cannot be read and of a file that cannot be written.
CANNOT = "cannot compact the ledger: {error}"
WHEN = "the ledger cannot be read or written"


@exit_on_error(ExitRule(LedgerError, Exit.INPUT, CANNOT, means=WHEN), ExitRule(OSError, Exit.INPUT, CANNOT, means=WHEN),
               raises=(LedgerBusy,))
def compact(ledger_dir: LedgerArg, wait: WaitOpt = DEFAULT_WAIT, fmt: FormatOpt = Format.table) -> None:
    """Merge the ledger's parts (one per scoring batch) into one part per table; rows are unchanged.

    Example: trajcheck compact ledger/
    """
    from ..commands import compact as merge  # pyarrow loads when the command runs

    done = merge(ledger_dir, wait=wait, on_wait=lambda w: err.print(wait_line(w), highlight=False, markup=False))
    if fmt is Format.table:
        err.print(f"compacted {done.ledger}: {done.parts_before} parts -> {done.parts_after} "
                  f"(generation {done.generation})", highlight=False, markup=False)
    elif fmt is Format.json:
        print_json(done.to_json())
    else:
        emit(["ledger", "parts_before", "parts_after", "generation"],
             [[str(done.ledger), done.parts_before, done.parts_after, done.generation]], fmt)
    raise typer.Exit(int(Exit.OK))
