"""The trajcheck command line: one Typer app, one module per command.

A command's module is imported when the command is first looked up (to run it, or to list it in
``trajcheck --help``), not when the app is: ``trajcheck score`` does not load the other ten commands and
what only they use (0.03-0.04 s of its start, measured with ``python -X importtime``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any, Callable

import typer
from typer.core import TyperGroup

from ..base.version import __version__

#: Every command: its name on the command line -> the module of this package that defines it, in a function of
#: the module's name. In the order ``trajcheck --help`` lists them.
COMMANDS: dict[str, str] = {
    "score": "score", "validate": "validate", "query": "query", "columns": "columns", "formats": "formats",
    "timeline": "timeline", "diff": "diff", "compare": "compare", "failures": "failures", "check": "check",
    "agree": "agree", "judges": "judges", "flaky": "flaky", "redo": "redo",
    "export": "export", "report": "report", "best-of": "best_of", "compact": "compact",
    "draft-contract": "draft_contract",
    "draft-mapping": "draft_mapping",
}


def command(name: str) -> Callable[..., None]:
    """The function of the command ``name`` (one of :data:`COMMANDS`), its module imported."""
    module = COMMANDS[name]
    fn: Callable[..., None] = getattr(importlib.import_module(f"{__package__}.{module}"), module)
    return fn


class _Commands(MutableMapping[str, Any]):
    """A group's commands by name, each made into a click command when it is first looked up: click asks
    for the one it runs, help and the "did you mean" suggestion iterate over all of them."""

    def __init__(self) -> None:
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            if name not in COMMANDS:
                raise KeyError(name)
            self._made[name] = _click_command(name)
        return self._made[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        self._made[name] = cmd

    def __delitem__(self, name: str) -> None:
        raise TypeError("trajcheck's commands cannot be removed")

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (n for n in self._made if n not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(n not in COMMANDS for n in self._made)


def _click_command(name: str) -> Any:
    """The click command of ``name``, made as the app would make it: through a one-command Typer app with the
    same settings (its help option names come from the group's context)."""
    one = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                      pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode)
    one.command(name)(command(name))
    return typer.main.get_command(one)


class _LazyGroup(TyperGroup):
    """The app's group, whose commands are :class:`_Commands`."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands()


app = typer.Typer(
    name="trajcheck",
    cls=_LazyGroup,
    help="What did the agent really do? Offline analysis of recorded computer-use runs.\n\n"
         "Example: trajcheck score sample_runs/ --out ledger/ && "
         "trajcheck query ledger/ \"select count(*) from steps\"",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
