"""trajcheck formats: the run formats trajcheck reads and how their fields map."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import emit, print_json
from .exits import exit_on_error
from .options import Format, FormatOpt


@exit_on_error()
def formats(
    name: Annotated[Optional[str], typer.Argument(help="Show the field mapping of this format.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the run formats `score --input-format` accepts, or one format's field mapping.

    Example: trajcheck formats webvoyager
    """
    from ..commands import format_summary, formats as known  # loaded when the command runs

    rows = known(name)
    if fmt is Format.json:
        print_json(rows)
        return
    cols = ["format", "summary"] if name is None else ["source field", "trajcheck field"]
    emit(cols, [[r[c] for c in cols] for r in rows], fmt,
         title="run formats" if name is None else f"{name}: {format_summary(name)}")
