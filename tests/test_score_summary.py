"""`score`'s closing lines count the runs scored with warnings and name their kinds: a frame that cannot be
decoded, a point outside the frame and an unknown action type no longer end in a silent `0 invalid`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import SAMPLES, read_steps, write_steps

runner = CliRunner()


def _copy(runs: Path, name: str) -> Path:
    d = shutil.copytree(SAMPLES / "terms-checkbox-off", runs / name)
    meta = json.loads((d / "run.json").read_text())
    (d / "run.json").write_text(json.dumps({**meta, "run_id": name}))
    return d


def _first_action(run: Path, **change: object) -> None:
    steps = read_steps(run)
    steps[0]["action"].update(change)
    write_steps(run, steps)


def _runs_with_warnings(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    (_copy(runs, "unreadable") / "frames" / "002.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not an image" * 10)
    _first_action(_copy(runs, "outside"), x=5000)
    _first_action(_copy(runs, "unknown"), type="WIGGLE")
    _copy(runs, "clean")
    return runs


def test_the_summary_counts_the_runs_with_warnings_by_kind(tmp_path):
    res = runner.invoke(app, ["score", str(_runs_with_warnings(tmp_path)), "--out", str(tmp_path / "L"), "-q"])
    assert res.exit_code == 0, res.output  # scored with warnings: not invalid
    assert "scored 4 runs (0 invalid)" in res.stderr
    assert ("3 runs with warnings: coords_outside_frame 1, frame_unreadable 1, unknown_action_type 1; "
            "trajcheck validate shows them") in res.stderr.splitlines()
    assert "with warnings" not in res.stdout  # stdout is the table


def test_the_library_result_counts_them_too(tmp_path):
    import trajcheck

    result = trajcheck.score([_runs_with_warnings(tmp_path)], out=tmp_path / "L")
    assert result.with_warnings == 3
    assert result.warning_kinds == {"coords_outside_frame": 1, "frame_unreadable": 1, "unknown_action_type": 1}


def test_runs_without_warnings_add_no_line(tmp_path):
    runs = tmp_path / "runs"
    _copy(runs, "clean")
    res = runner.invoke(app, ["score", str(runs), "--out", str(tmp_path / "L"), "-q"])
    assert res.exit_code == 0 and "with warnings" not in res.output
