"""trajcheck validate: report every problem of run directories without scoring them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import Exit, emit, err, fail, print_json
from .exits import ExitOutcome, exit_on_error
from .options import Format, FormatOpt, InputFormatOpt, MappingOpt
from ..base.words import count


@exit_on_error(ExitOutcome(Exit.OK, "no errors"), ExitOutcome(Exit.FINDINGS, "errors found, or warnings with --strict"),
               ExitOutcome(Exit.INPUT, "a path does not exist, or no run was found (a folder of JSON or images no "
                                   "reader claims, an unfinished run, or nothing), as score exits"))
def validate(
    runs: Annotated[list[Path], typer.Argument(help="Run directories, or folders searched recursively.",
                                               show_default=False)],
    strict: Annotated[bool, typer.Option(help="Exit 1 on warnings too.")] = False,
    mapping: MappingOpt = None,
    input_format: InputFormatOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Check run directories: JSON, schema, step indices, paths, frame files and coordinates.

    Example: trajcheck validate sample_runs/ ; trajcheck validate logs/ --input-format ui-tars
    """
    from ..commands import validate as check  # loaded when the command runs

    report = check(runs, mapping=mapping, input_format=input_format)
    if fmt is Format.json:
        print_json(report.to_json())
    elif fmt is Format.csv or report.problems:
        cols = ["severity", "slug", "run", "reader", "file", "line", "field", "message", "hint"]
        emit(cols, [[p.to_dict()[c] for c in cols] for p in report.problems], fmt, title="trajcheck validate")
    err.print(f"checked {count(report.runs, 'run')}: {count(len(report.errors), 'error')}, "
              f"{count(len(report.warnings), 'warning')}",
              highlight=False)
    for line in report.join.lines() if report.join is not None else []:  # the mapping's results file
        err.print(line, highlight=False, markup=False)
    for note in report.endings:  # how many runs end without an answer, and what their declaration makes of them
        err.print(note.text(), highlight=False, markup=False)
    if report.nothing_to_check:
        if not report.runs:
            fail("no runs found", Exit.INPUT, hint="pass run directories (holding run.json) or folders that contain "
                 "them; `trajcheck formats --detect FOLDER` says why each reader did not claim a folder")
        raise typer.Exit(int(Exit.INPUT))
    raise typer.Exit(int(Exit.FINDINGS if report.errors or (strict and report.warnings) else Exit.OK))
