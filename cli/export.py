"""trajcheck export: tables for benchmark reports (Markdown, CSV, LaTeX, HTML, JSON)."""

from __future__ import annotations

import enum
import os
import sys
import uuid
from pathlib import Path
from typing import Annotated, Optional

import typer

from trajcheck.errors import LedgerError, UsageError

from .common import Exit, fail


class ExportTable(str, enum.Enum):
    summary = "summary"
    per_task = "per-task"
    per_action_type = "per-action-type"
    compare = "compare"


class ExportFormat(str, enum.Enum):
    md = "md"
    csv = "csv"
    latex = "latex"
    html = "html"
    json = "json"


def export(
    ledger_dir: Annotated[Path, typer.Argument(metavar="LEDGER", help="Ledger directory written by `score`.")],
    table: Annotated[ExportTable, typer.Option(help="Which table.")] = ExportTable.summary,
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="md, csv, latex, html or json.")]
    = ExportFormat.md,
    by: Annotated[Optional[str], typer.Option(help="Group runs by this column or config.KEY (arms).")] = None,
    success_score: Annotated[float, typer.Option(help="For runs without a verdict: outcome.score at or above "
                                                 "this is a success.")] = 1.0,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write here (default: stdout).")] = None,
) -> None:
    """Export a table for a paper or a PR: same ledger, byte-identical output.

    Example: trajcheck export ledger/ --table compare --by config.perceptual_verifier --format latex --out t.tex

    Exit codes: 0 ok; 2 bad options; 3 the ledger cannot be read or the file written.
    """
    try:
        from trajcheck.tables import RENDERERS, build  # scipy.stats: imported only when used

        text = RENDERERS[fmt.value](build(ledger_dir, table.value, by, success_score))
    except LedgerError as exc:
        fail(str(exc), Exit.INPUT)
    except UsageError as exc:
        fail(str(exc), Exit.USAGE)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        fail(f"cannot write {out}: {exc}", Exit.INPUT)
