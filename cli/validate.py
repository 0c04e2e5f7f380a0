"""trajcheck validate: report every problem of run directories without scoring them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import Exit, emit, err
from .exits import exit_on_error
from .options import Format, FormatOpt, MappingOpt


@exit_on_error()
def validate(
    runs: Annotated[list[Path], typer.Argument(help="Run directories, or folders searched recursively.",
                                               show_default=False)],
    strict: Annotated[bool, typer.Option(help="Exit 1 on warnings too.")] = False,
    mapping: MappingOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Check run directories: JSON, schema, step indices, paths, frame files and coordinates.

    Example: trajcheck validate sample_runs/

    Exit codes: 0 no errors; 1 errors found (or warnings, with --strict); 3 a path does not exist, or
    a folder holds JSON or images but no run any reader claims.
    """
    from trajcheck.problems import Slug
    from trajcheck.validate import validate_paths  # loaded when the command runs

    report = validate_paths(runs, mapping=mapping)
    cols = ["severity", "slug", "run", "file", "line", "field", "message", "hint"]
    if fmt is not Format.table or report.problems:
        emit(cols, [[p.to_dict()[c] for c in cols] for p in report.problems], fmt, title="trajcheck validate")
    n_err = len(report.errors)
    n_warn = len(report.problems) - n_err
    err.print(f"checked {report.runs} runs: {n_err} errors, {n_warn} warnings", highlight=False)
    slugs = {p.slug for p in report.problems}
    nothing_read = {Slug.NO_READER_CLAIMS, Slug.MAPPING_MATCHES_NOTHING}
    if Slug.PATH_NOT_FOUND in slugs or (not report.runs and slugs & nothing_read):
        raise typer.Exit(int(Exit.INPUT))  # nothing to check: a missing path, or files no reader reads
    raise typer.Exit(int(Exit.FINDINGS if n_err or (strict and n_warn) else Exit.OK))
