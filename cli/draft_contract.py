"""trajcheck draft-contract: a contract drafted from a run that succeeded, for the user to trim."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..base.errors import LedgerError

from .common import Exit, emit, err, out, print_json
from .exits import ExitOutcome, ExitRule, exit_on_error
from .options import Format, FormatOpt, LedgerArg
from ..base.words import count


@exit_on_error(ExitRule(OSError, Exit.INPUT, "cannot write the contract: {error}",
                    means="the --out file cannot be written"),
               ExitOutcome(Exit.USAGE, "no such run, its files are gone, or it shows nothing new"),
               raises=(LedgerError,))
def draft_contract(
    ledger_dir: LedgerArg,
    run_id: Annotated[str, typer.Argument(help="A run you know succeeded.")],
    out_file: Annotated[Optional[Path], typer.Option("--out", help="Write the contract to this file (e.g. "
                                                     "contracts/<task_id>.json for score --contracts) instead of "
                                                     "printing it.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Draft a contract from a run that succeeded.

    It has a check for each new line of text its final screen shows (DOM text, else what OCR read; no
    clocks, menu-bar items or lines quoting the task), its URL and its title when they changed, its
    title band and its final answer. Trim it, then score with it. It prints the contract file
    (--format json: the contract and the notes; csv: a check a row).

    Example: trajcheck draft-contract ledger/ terms-checkbox-on --out contracts/create-workspace.json
    """
    from ..commands import draft_contract as draft

    got = draft(ledger_dir, run_id)
    text = json.dumps(got.contract, indent=2, ensure_ascii=False) + "\n"
    for note in got.notes:
        err.print(f"note: {note}", highlight=False, markup=False)
    if out_file is None:
        if fmt is Format.json:
            print_json(got.to_json())
        elif fmt is Format.csv:
            emit(["name", "type", "what"], [[c["name"], c["type"], c.get("pattern") or c.get("text")]
                                            for c in got.contract["checks"]], fmt)
        else:
            out.print(text, end="", highlight=False, markup=False, soft_wrap=True)
    else:
        from ..base.atomic import atomic_write

        with atomic_write(out_file, "w") as f:
            f.write(text)
        err.print(f"wrote {count(len(got.contract['checks']), 'check')} to {out_file}: trim them to what the task asks",
                  highlight=False, markup=False)
    raise typer.Exit(int(Exit.OK))
