"""trajcheck compact: merge a ledger's parts into one file per table."""

from __future__ import annotations

import typer

from trajcheck.errors import LedgerError
from trajcheck.lock import DEFAULT_WAIT, LedgerBusy

from .common import Exit, err, wait_line
from .exits import Rule, exit_on_error
from .options import LedgerArg, WaitOpt

#: What compact could not do, said of a ledger that cannot be read and of a file that cannot be written.
CANNOT = "cannot compact the ledger: {error}"
WHEN = "the ledger cannot be read or written"


@exit_on_error(Rule(LedgerError, Exit.INPUT, CANNOT, means=WHEN), Rule(OSError, Exit.INPUT, CANNOT, means=WHEN),
               raises=(LedgerBusy,))
def compact(ledger_dir: LedgerArg, wait: WaitOpt = DEFAULT_WAIT) -> None:
    """Merge the ledger's parts (one per scoring batch) into one part per table; rows are unchanged.

    Example: trajcheck compact ledger/
    """
    from trajcheck import ledger  # DuckDB loads when the command runs

    before = ledger.read_manifest(ledger_dir) if ledger_dir.is_dir() else None
    manifest = ledger.compact(ledger_dir, wait, lambda w: err.print(wait_line(w), highlight=False, markup=False))
    n_before = sum(len(v) for v in before.parts.values()) if before else 0
    err.print(f"compacted {ledger_dir}: {n_before} parts -> {sum(len(v) for v in manifest.parts.values())} "
              f"(generation {manifest.generation})", highlight=False)
    raise typer.Exit(int(Exit.OK))
