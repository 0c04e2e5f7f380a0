"""trajcheck compact: merge a ledger's parts into one file per table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trajcheck.lock import DEFAULT_WAIT
from trajcheck.errors import LedgerError

from .common import Exit, err, fail, wait_line


def compact(
    out: Annotated[Path, typer.Argument(help="Ledger directory written by `score`.", show_default=False)],
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for another writer of the same "
                                        "ledger to finish; then exit 4.")] = DEFAULT_WAIT,
) -> None:
    """Merge the ledger's parts (one per scoring batch) into one part per table; rows are unchanged.

    Example: trajcheck compact ledger/

    Exit codes: 0 done; 3 the ledger cannot be read or written; 4 another writer held the ledger for
    longer than --wait.
    """
    from trajcheck import ledger  # DuckDB loads when the command runs
    from trajcheck.lock import LedgerBusy

    try:
        before = ledger.read_manifest(out) if out.is_dir() else None
        manifest = ledger.compact(out, wait, lambda w: err.print(wait_line(w), highlight=False, markup=False))
    except LedgerBusy as exc:
        fail(str(exc), Exit.LOCKED, "nothing was written; compact again when it is done, or raise --wait")
    except (LedgerError, OSError) as exc:
        fail(f"cannot compact the ledger: {exc}", Exit.INPUT)
    n_before = sum(len(v) for v in before.parts.values()) if before else 0
    err.print(f"compacted {out}: {n_before} parts -> {sum(len(v) for v in manifest.parts.values())} "
              f"(generation {manifest.generation})", highlight=False)
    raise typer.Exit(int(Exit.OK))
