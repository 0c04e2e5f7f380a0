"""trajcheck validate: report every problem of run directories without scoring them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


from .common import Exit, Format, emit, err, fail


def validate(
    runs: Annotated[list[Path], typer.Argument(help="Run directories, or folders searched recursively.",
                                               show_default=False)],
    strict: Annotated[bool, typer.Option(help="Exit 1 on warnings too.")] = False,
    mapping: Annotated[Optional[Path], typer.Option("--mapping", help="A mapping file (TOML, JMESPath) that reads "
                                                    "logs of another shape; see docs/mappings/.")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output: table, json or csv.")] = Format.table,
) -> None:
    """Check run directories: JSON, schema, step indices, paths, frame files and coordinates.

    Example: trajcheck validate sample_runs/

    Exit codes: 0 no errors; 1 errors found (or warnings, with --strict); 3 a path does not exist, or
    a folder holds JSON or images but no run any reader claims.
    """
    from trajcheck.validate import validate_paths  # loaded when the command runs

    from trajcheck.errors import UsageError

    try:
        report = validate_paths(runs, mapping=mapping)
    except UsageError as exc:
        fail(str(exc), Exit.USAGE)
    cols = ["severity", "slug", "run", "file", "line", "field", "message", "hint"]
    if fmt is not Format.table or report.problems:
        emit(cols, [[p.to_dict()[c] for c in cols] for p in report.problems], fmt, title="trajcheck validate")
    n_err = len(report.errors)
    n_warn = len(report.problems) - n_err
    err.print(f"checked {report.runs} runs: {n_err} errors, {n_warn} warnings", highlight=False)
    if any(p.slug == "path_not_found" for p in report.problems) or (
            not report.runs and any(p.slug in ("no_reader_claims", "mapping_matches_nothing") for p in report.problems)):
        raise typer.Exit(int(Exit.INPUT))  # nothing to check: a missing path, or files no reader reads
    raise typer.Exit(int(Exit.FINDINGS if n_err or (strict and n_warn) else Exit.OK))
