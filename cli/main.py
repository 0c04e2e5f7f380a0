"""The trajcheck command line: one Typer app, one module per command."""

from __future__ import annotations

import typer

from trajcheck import __version__

from .agree import agree
from .best_of import best_of
from .columns import columns
from .compact import compact
from .compare import compare
from .export import export
from .formats import formats
from .query import query
from .report import report
from .timeline import timeline
from .score import score
from .validate import validate

app = typer.Typer(
    name="trajcheck",
    help="What did the agent really do? Offline analysis of recorded computer-use runs.\n\n"
         "Example: trajcheck score sample_runs/ --out ledger/ && "
         "trajcheck query ledger/ \"select count(*) from steps\"",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(score)
app.command()(validate)
app.command()(query)
app.command()(columns)
app.command()(formats)
app.command()(timeline)
app.command()(compare)
app.command()(agree)
app.command()(export)
app.command()(report)
app.command("best-of")(best_of)
app.command()(compact)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trajcheck {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """What did the agent really do?"""


def main() -> None:
    from . import score

    score.OWN_PROCESS = True  # the process ends with the command: `score` may skip loading pandas
    app()
