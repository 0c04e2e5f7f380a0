"""`formats --detect` for people (issue 46): by default one line per folder, the reader that claims it (or that
none does, and the short reason), and a summary; `--all` every reader's reason, readers and folders given the
same reasons together. Both whole at 80 columns: no id split, no word broken, a length a person reads.
`--format json` keeps every reader's look at every folder, raw."""

from __future__ import annotations

import json
import re
from typing import Callable

import pytest
from typer.testing import CliRunner

from trajcheck.cli.main import app
from trajcheck.readers.discovery import reader_names

from conftest import SAMPLES, sample_run_dirs

COLUMNS = 80


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, ["formats", "--detect", *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def _fits(out: str) -> None:
    assert max(map(len, out.splitlines())) <= COLUMNS
    assert "…" not in out


def _words(out: str) -> set[str]:
    return set(re.split(r"[\s,:()]+", out))


def test_default_names_the_claiming_reader_per_folder_and_sums_up(width: Callable[[int], None]) -> None:
    width(COLUMNS)
    out = _run(str(SAMPLES))
    _fits(out)
    runs = [d.name for d in sample_run_dirs()]
    lines = out.splitlines()
    for name in runs:  # each run folder on one line with its reader, whole
        [line] = [x for x in lines if x.split()[:1] == [name]]
        assert line.split()[1:] == ["trajcheck.run/1", "run.json", "is", "there"], line
    [top] = [x for x in lines if x.split()[:1] == ["."]]
    assert top.split()[1:3] == ["none", "trajcheck.run/1:"]  # none claims it, and the native reader's reason
    assert lines[-1] == f"{len(runs) + 1} folders: trajcheck.run/1 {len(runs)}, claimed by none 1"
    assert len(lines) <= len(runs) + 12, len(lines)  # a line a folder, not a line per reader and word
    # the other readers' reasons are for --all
    assert "webvoyager" not in out and "read by the native reader" not in out


def test_all_gives_every_readers_reason_grouped_and_whole(width: Callable[[int], None]) -> None:
    width(COLUMNS)
    out = _run(str(SAMPLES), "--all")
    _fits(out)
    rows = json.loads(_run(str(SAMPLES), "--format", "json"))
    shown = _words(out)
    assert set(reader_names()) <= shown, set(reader_names()) - shown  # every reader id whole
    assert {d.name for d in sample_run_dirs()} <= shown  # every folder whole
    for why in {r["why"] for r in rows}:  # every reason, no word of it broken
        assert set(re.split(r"[\s,:()]+", why)) <= shown, why
    # the 28 run folders are given the same reasons: said once, with the 8 readers that decline them together
    assert " ".join(out.split()).count("run.json is there: a trajcheck run, read by the native reader") == 1
    assert len(out.splitlines()) < 60, len(out.splitlines())


def test_json_keeps_every_readers_look() -> None:
    rows = json.loads(_run(str(SAMPLES), "--format", "json"))
    assert len(rows) == (len(sample_run_dirs()) + 1) * len(reader_names())
    assert {r["reader"] for r in rows if r["reads"]} == {"trajcheck.run/1"}


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_after_detect_is_help_not_a_folder(flag: str) -> None:
    res = CliRunner().invoke(app, ["formats", "--detect", flag])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.stdout and "--all" in res.stdout
    assert "is not a folder" not in res.output
