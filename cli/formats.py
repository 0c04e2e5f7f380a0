"""trajcheck formats: the run formats trajcheck reads and how their fields map."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import Exit, emit, fail
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
    from trajcheck.discovery import readers  # loaded when the command runs

    known = readers()

    if name is None:
        emit(["format", "summary"], [(r.name, r.summary) for r in known], fmt, title="run formats")
        return
    reader = next((r for r in known if r.name == name), None)
    if reader is None:
        fail(f"unknown format {name!r}", Exit.USAGE, "formats: " + ", ".join(r.name for r in known))
    emit(["source field", "trajcheck field"], list(reader.mapping), fmt, title=f"{reader.name}: {reader.summary}")
