"""trajcheck export: tables for benchmark reports (Markdown, CSV, LaTeX, HTML, JSON)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..base.errors import LedgerError

from .common import Exit
from .exits import ExitRule, exit_on_error
from .options import ByOpt, ExportFormat, ExportFormatOpt, LedgerArg, SuccessScoreOpt


class ExportTable(str, enum.Enum):
    summary = "summary"
    per_task = "per-task"
    per_action_type = "per-action-type"
    compare = "compare"


class Missing(str, enum.Enum):
    skip = "skip"
    fail = "fail"


class Damaged(str, enum.Enum):
    keep = "keep"
    exclude = "exclude"


# the file is named, not its temporary sibling the OSError names
@exit_on_error(ExitRule(OSError, Exit.INPUT, lambda exc, params: f"cannot write {params['out'] or 'stdout'}: {exc}",
                    means="the file cannot be written"), raises=(LedgerError,))
def export(
    ledger_dir: LedgerArg,
    table: Annotated[ExportTable, typer.Option(metavar="TABLE", help="Which table: summary, per-task, "
                                               "per-action-type or compare.")] = ExportTable.summary,
    fmt: ExportFormatOpt = ExportFormat.md,
    by: ByOpt = None,
    success_score: SuccessScoreOpt = 1.0,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write here (default: stdout).")] = None,
    missing: Annotated[Optional[Missing], typer.Option(
        help="With the expected runs (score --expect): fail (the default) counts each missing or unreadable run "
             "as a failure, so rates are over the expected runs; skip leaves them out.")] = None,
    damaged: Annotated[Damaged, typer.Option(help="With the expected runs: keep counts the damaged runs as "
                                             "scored, exclude leaves them out of the rates.")] = Damaged.keep,
) -> None:
    """Export a table for a paper or a PR: same ledger, byte-identical output.

    Example: trajcheck export ledger/ --table compare --by config.perceptual_verifier --format latex --out t.tex
    """
    from ..commands import export_table  # scipy.stats: imported only when used

    text = export_table(ledger_dir, table.value, fmt.value, by=by, success_score=success_score, out=out,
                        missing=missing.value if missing else None, damaged=damaged.value)
    if out is None:
        sys.stdout.write(text)
