"""trajcheck formats: the run formats trajcheck reads and how their fields map; with --detect, which reader
claims each folder (with --all, why each reader did or did not)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from .common import data_text, emit, out, print_json, print_problems, say
from .exits import exit_on_error
from .options import Format, FormatOpt

if TYPE_CHECKING:
    from ..readers.detect import FolderView


def _folder_or_help(ctx: typer.Context, value: Optional[Path]) -> Optional[Path]:
    """``--detect --help`` asks for help, not about a folder named --help: the option takes the next word."""
    if value is not None and str(value) in ctx.help_option_names:
        typer.echo(ctx.get_help(), color=ctx.color)  # as click's own --help does
        raise typer.Exit()
    return value


def _claimed_rows(views: list["FolderView"]) -> list[list[str]]:
    """One row a folder: the reader that reads it and its reason, or none and the first reader's reason."""
    rows = []
    for v in views:
        if v.note:
            rows.append([v.folder, "", v.why])
        elif v.reader is not None:
            rows.append([v.folder, v.reader, v.why])
        else:
            first = v.reasons[0].readers[0]
            more = f" ({v.asked - 1} more reader{'' if v.asked == 2 else 's'} said no: --all)" if v.asked > 1 else ""
            rows.append([v.folder, "none", f"{first}: {v.why}{more}"])
    return rows


def _all(views: list["FolderView"]) -> None:
    """Every reader's reason, per group of folders given the same reasons: the folders, then a line per
    reason with the readers that gave it. Lines wrap between words, so no id is ever split."""
    from rich.table import Table

    from ..readers.detect import alike

    for names, v in alike(views):
        out.print()
        if v.note:
            out.print(data_text(v.why, "dim"))
            continue
        which = f"read by {v.reader}" if v.reader else "claimed by no reader"
        head = f"{len(names)} folders {which}: {', '.join(names)}" if len(names) > 1 else f"folder {names[0]}, {which}"
        out.print(data_text(head, "bold"), soft_wrap=False, highlight=False)  # wrapped between words
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column(overflow="fold")
        for g in v.reasons:
            grid.add_row("reads" if g.reads else "claims" if g.claims else "no",
                         data_text(", ".join(g.readers) + ": " + g.why))
        out.print(grid)
    out.print()


@exit_on_error()
def formats(
    name: Annotated[Optional[str], typer.Argument(help="Show the field mapping of this format.")] = None,
    detect: Annotated[Optional[Path], typer.Option("--detect", help="For this folder and the folders below it "
                                                   "that are searched for runs, show which reader claims each "
                                                   "(with NAME: ask that reader only).", show_default=False,
                                                   callback=_folder_or_help)] = None,
    every: Annotated[bool, typer.Option("--all", help="With --detect: every reader's reason for each folder, "
                                        "readers giving the same reason together.")] = False,
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
        if fmt is Format.csv:  # every reader's look, raw values
            cols = ["folder", "reader", "claims", "fit", "reads", "why"]
            emit(cols, [[r[c] for c in cols] for r in looked], fmt)
            return
        from ..readers.detect import folders, summary

        views = folders(looked)
        if every:
            _all(views)
        else:
            emit(["folder", "reader", "why"], _claimed_rows(views), fmt,
                 title=f"the reader that claims each folder of {detect}")
        say(summary(views))
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
