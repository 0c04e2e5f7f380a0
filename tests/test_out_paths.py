"""Every `--out` makes the folders it needs (`draft-contract --out contracts/X.json` as the README writes it, on
a fresh clone), and a file that cannot be written is named as the user gave it, never by the temporary name
the atomic write used (core/base/atomic.py)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajcheck.base.atomic import atomic_path, atomic_write
from trajcheck.cli.main import app

from conftest import SAMPLES

runner = CliRunner()

#: Each command with an --out: its arguments before it, given the sample ledger.
OUT = {
    "draft-contract": lambda L: ["draft-contract", str(L), "terms-checkbox-on"],
    "export": lambda L: ["export", str(L), "--table", "summary"],
    "check": lambda L: ["check", str(L), "--min-success", "0.1", "--format", "json"],
    "report": lambda L: ["report", str(L), "-q"],
    "score": lambda L: ["score", str(SAMPLES / "captcha-blocked"), "-q"],
}


def test_every_out_option_is_listed_here():
    import typer

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    with_out = sorted(n for n, c in commands.items() if any("--out" in getattr(p, "opts", []) for p in c.params))
    assert with_out == sorted(OUT)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(OUT))
def test_out_makes_the_folders_it_needs(sample_ledger, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)  # a relative path, as the README writes it
    target = Path("new") / "deeper" / ("result" if command in ("report", "score") else "X.json")
    res = runner.invoke(app, [*OUT[command](sample_ledger), "--out", str(target)])
    assert res.exit_code in (0, 1), res.output
    assert target.exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.parametrize("command", ["draft-contract", "export", "check"])
def test_a_file_that_cannot_be_written_is_named_as_given(sample_ledger, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    Path("taken.json").mkdir()  # a folder where the file should go
    res = runner.invoke(app, [*OUT[command](sample_ledger), "--out", "taken.json"])
    assert res.exit_code == 3, res.output
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("error:"))
    assert "'taken.json'" in line and ".tmp" not in res.output, line
    assert sorted(os.listdir(tmp_path)) == ["taken.json"] and not os.listdir("taken.json")


def test_a_file_where_a_folder_should_be_is_named(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(NotADirectoryError) as got:
        with atomic_write(tmp_path / "afile" / "x.md", "w") as f:
            f.write("x")
    assert got.value.filename == str(tmp_path / "afile") and ".tmp" not in str(got.value)


def test_an_error_naming_the_temporary_file_names_the_target_instead(tmp_path, monkeypatch):
    target = tmp_path / "out.json"

    def refused(src: str, dst: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", src, dst)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(PermissionError) as got:
        with atomic_path(target) as temp:
            temp.write_text("{}")
    assert got.value.filename == str(target) and got.value.errno == errno.EACCES
    assert str(got.value) == f"[Errno 13] Permission denied: '{target}'"
    assert os.listdir(tmp_path) == []  # the temporary file is gone


def test_other_errors_pass_unchanged(tmp_path):
    with pytest.raises(FileNotFoundError) as got:
        with atomic_path(tmp_path / "x"):
            (tmp_path / "elsewhere" / "y").read_text()
    assert got.value.filename == str(tmp_path / "elsewhere" / "y")


def test_an_atomic_write_makes_every_missing_folder(tmp_path):
    shutil.rmtree(tmp_path)  # not even the folder of the test
    with atomic_write(tmp_path / "a" / "b.txt", "w") as f:
        f.write("made")
    assert (tmp_path / "a" / "b.txt").read_text() == "made"
