"""trajcheck formats: the run formats trajcheck reads and how their fields map; with --detect, which readers
claim a folder and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit, print_json, print_problems
from .exits import exit_on_error
from .options import Format, FormatOpt


@exit_on_error()
def formats(
    name: Annotated[Optional[str], typer.Argument(help="Show the field mapping of this format.")] = None,
    detect: Annotated[Optional[Path], typer.Option("--detect", help="List, for this folder and the folders below "
                                                   "it that are searched for runs, which readers looked at each and "
                                                   "why each did or did not claim it (with NAME: that reader only).",
                                                   show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the run formats `score --input-format` accepts, or one format's field mapping.

    Example: trajcheck formats webvoyager ; trajcheck formats --detect runs/
    """
    from ..commands import detect_formats, format_summary, formats as known  # loaded when the command runs
    from ..readers.plugins import load_problems

    if detect is not None:
        looked = detect_formats(detect, name)
        if fmt is Format.json:
            print_json(looked)
            return
        cols = ["folder", "reader", "claims", "reads", "why"]
        emit(cols, [["yes" if r[c] is True else "" if r[c] is False else r[c] for c in cols] for r in looked], fmt,
             title=f"readers that looked at {detect}")
        print_problems(load_problems())
        return
    rows = known(name)
    print_problems(load_problems())  # the readers other packages register that did not load
    if fmt is Format.json:
        print_json(rows)
        return
    cols = ["format", "summary"] if name is None else ["source field", "trajcheck field"]
    emit(cols, [[r[c] for c in cols] for r in rows], fmt,
         title="run formats" if name is None else f"{name}: {format_summary(name)}")
