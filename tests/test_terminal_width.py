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
    assert "…" not in out, [line for line in out.splitlines() if "…" in line]  # nothing cut short
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


def _run(args: list[str]) -> Any:
    res = CliRunner().invoke(app, args)
    assert res.exit_code in (0, 1), res.output
    return res


def _assert_whole(out: str, ids: set[str], columns: int) -> None:
    words = set(re.split(r"[\s(),:]+", out))
    cut = sorted(i for i in ids if i not in words)
    assert not cut, f"at {columns} columns these ids are not printed whole: {cut}"
    assert "…" not in out
    assert max(map(len, out.splitlines()), default=0) <= columns


def _json(args: list[str]) -> Any:
    import json

    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("columns", WIDTHS)
def test_best_of_prints_every_id_whole(sample_ledger: Path, width: Callable[[int], None], columns: int) -> None:
    width(columns)
    rows = _json(["best-of", str(sample_ledger)])
    ids = {r["task_id"] for r in rows} | {r["best_run"] for r in rows}
    assert len(ids) > 30
    _assert_whole(_run(["best-of", str(sample_ledger)]).stdout, ids, columns)


CHECK = ["--max-false-claim-rate", "0.1", "--min-success", "0.8"]


@pytest.mark.parametrize("columns", WIDTHS)
def test_check_prints_every_task_and_rule_whole(sample_ledger: Path, width: Callable[[int], None],
                                                 columns: int) -> None:
    width(columns)
    data = _json(["check", str(sample_ledger), *CHECK])
    ids = {r["rule"] for r in data["rules"]} | {g["scope"] for r in data["rules"] for g in r["groups"]
                                                if g["reason"] in ("over_limit", "over_limit_alone")}
    assert "create-workspace" in ids and "max-false-claim-rate" in ids
    _assert_whole(_run(["check", str(sample_ledger), *CHECK]).stdout, ids, columns)


@pytest.mark.parametrize("columns", WIDTHS)
def test_validate_prints_every_slug_and_run_whole(tmp_path: Path, width: Callable[[int], None], columns: int) -> None:
    import json
    import shutil

    width(columns)
    run = shutil.copytree(SAMPLES / "stale-element-recovery", tmp_path / "runs" / "r")
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "run_id": "a-run-with-a-rather-long-name"}))
    lines = (run / "steps.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["action"]["type"] = "HOVER_AND_PONDER"
    (run / "steps.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    res = _run(["validate", str(tmp_path / "runs")])
    _assert_whole(res.stdout, {"unknown_action_type", "a-run-with-a-rather-long-name", "steps.jsonl",
                               "action.type"}, columns)
    assert len(res.stdout.splitlines()) <= 14  # a warning is a few lines, not one line per word


@pytest.mark.parametrize("columns", WIDTHS)
def test_compare_prints_every_arm_whole(sample_ledger: Path, width: Callable[[int], None], columns: int) -> None:
    width(columns)
    res = _run(["compare", str(sample_ledger), "--by", "config.perceptual_verifier"])
    _assert_whole(res.stdout, {"config.perceptual_verifier", "false", "true", "recovered_after_warning"}, columns)


@pytest.mark.parametrize("columns", WIDTHS)
def test_diff_prints_both_run_ids_whole(sample_ledger: Path, width: Callable[[int], None], columns: int) -> None:
    width(columns)
    res = _run(["diff", str(sample_ledger), "--task", "newsletter-subscribe", "--by", "config.perceptual_verifier"])
    _assert_whole(res.stdout, {"consent-overlay-off", "consent-overlay-on"}, columns)


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("args", [
    ["timeline", "{L}", "consent-overlay-off"],
    ["query", "{L}", "select run_id, task_id, eval_final_verdict, verdict_reason from runs"],
    ["columns"], ["formats"], ["export", "{L}", "--table", "per-task"],
    ["score", str(SAMPLES / "terms-checkbox-on"), "--out", "{T}", "-q"],
], ids=lambda a: a[0])
@pytest.mark.slow
def test_every_command_fits(sample_ledger: Path, tmp_path: Path, width: Callable[[int], None], columns: int,
                            args: list[str]) -> None:
    width(columns)
    res = _run([a.replace("{L}", str(sample_ledger)).replace("{T}", str(tmp_path / "L")) for a in args])
    assert res.stdout.strip()
    if args[0] not in ("export", "columns", "formats"):  # Markdown and reference text are data, not a table
        assert max(map(len, res.stdout.splitlines())) <= columns, res.stdout
    assert "…" not in res.stdout
