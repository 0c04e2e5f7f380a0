"""Output that fits the terminal it is in (issue 40 part 2): every command's --help and tables at 80 and at 200
columns. Help text wraps between words (never inside one, never cut with an ellipsis), each command's summary
in `trajcheck --help` is one sentence, and a table prints every identifier whole (other columns wrap, or
below a width one record per block)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest
import typer.main
from typer.testing import CliRunner

from trajcheck.cli.main import COMMANDS, app

from conftest import SAMPLES

WIDTHS = (80, 200)
_BOX = re.compile(r"[│╭╮╰╯─]")


def _help(args: list[str], columns: int) -> str:
    res = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns)})
    assert res.exit_code == 0, res.output
    return res.stdout


def _words(text: str) -> list[str]:
    return text.replace("\\[", "[").split()


def _texts(cmd: Any) -> list[str]:
    """Every text of a command's help that is shown as written: its docstring, each parameter's help and
    the choices of an option that has no metavar of its own."""
    texts = [cmd.help or ""]
    for p in cmd.params:
        texts.append(getattr(p, "help", None) or "")
        if hasattr(p.type, "choices") and not p.metavar:
            texts += [str(c) for c in p.type.choices]
    return texts


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_wraps_between_words(name: str | None, columns: int) -> None:
    group = typer.main.get_command(app)
    cmd = group if name is None else group.commands[name]
    out = _help([] if name is None else [name], columns)
    assert "…" not in out, [l for l in out.splitlines() if "…" in l]  # nothing cut short
    assert max(map(len, out.splitlines())) <= columns
    shown = set(_BOX.sub(" ", out).split()) | set(re.sub(r"[<>|]", " ", _BOX.sub(" ", out)).split())
    missing = [w for t in _texts(cmd) for w in _words(t) if w not in shown]
    assert not missing, f"{name or 'trajcheck'} --help at {columns} columns breaks or hides: {missing}"


def test_each_command_summary_is_one_sentence() -> None:
    group = typer.main.get_command(app)
    out = _help([], 80)
    for name in COMMANDS:
        summary = (group.commands[name].help or "").split("\n\n")[0]
        assert "\n" not in summary, f"{name}: the summary is one paragraph on one line: {summary!r}"
        assert summary.endswith(".") and summary.count(". ") == 0, f"{name}: one sentence: {summary!r}"
        shown = " ".join(_BOX.sub(" ", out).split())
        assert " ".join(summary.split()) in shown, f"{name}'s summary is not shown whole in trajcheck --help"
