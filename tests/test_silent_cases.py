"""Issue 38 part 6, the silent cases: `validate` on a folder with no runs exits 3 as `score` does; the hidden folder
of a RunWriter killed before `finish` is named as an unfinished run by `validate` and `score`; a screenshot that is
there but cannot be decoded is `frame_unreadable` in both, with a hint about the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import ROOT, SAMPLES


def test_validate_on_a_folder_with_no_runs_exits_3_as_score_does(tmp_path):
    (tmp_path / "empty").mkdir()
    v = CliRunner().invoke(app, ["validate", str(tmp_path / "empty")])
    s = CliRunner().invoke(app, ["score", str(tmp_path / "empty"), "--out", str(tmp_path / "L")])
    assert (v.exit_code, s.exit_code) == (3, 3), (v.output, s.output)
    assert "no runs found" in v.output and "no runs found" in s.output


def _killed_writer(folder: Path) -> None:
    """A harness process that writes one step with trajcheck.RunWriter and is killed before finish()."""
    frame = SAMPLES / "consent-overlay-on" / "frames" / "001.png"
    code = ("import os, signal, trajcheck\n"
            f"w = trajcheck.RunWriter({str(folder / 'ep-0042')!r}, run_id='ep-0042')\n"
            f"w.step({{'type': 'CLICK', 'x': 1, 'y': 2}}, post=open({str(frame)!r}, 'rb').read())\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    assert proc.returncode != 0  # killed
    assert [p.name.startswith(".ep-0042.partial-") for p in folder.iterdir()] == [True]


def test_an_unfinished_run_is_named_by_validate_and_score(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    _killed_writer(runs)
    v = CliRunner().invoke(app, ["validate", str(runs), "--format", "json"])
    assert v.exit_code == 3  # nothing else in the folder: no runs found, and why
    [p] = json.loads(v.stdout)["problems"]
    assert (p["slug"], p["run"], p["severity"]) == ("unfinished_run", "ep-0042", "warning")
    assert "stopped before finish()" in p["message"]
    shutil.copytree(SAMPLES / "nc-inbox-read", runs / "done")  # beside a finished run: scored, and still named
    s = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "L")])
    assert s.exit_code == 0, s.output
    assert "scored 1 run (" in s.output and "unfinished run 'ep-0042'" in s.output and "[unfinished_run]" in s.output
    v = CliRunner().invoke(app, ["validate", str(runs), "--format", "json"])
    assert v.exit_code == 0 and json.loads(v.stdout)["runs"] == 1
    assert [p["slug"] for p in json.loads(v.stdout)["problems"] if p["slug"] == "unfinished_run"] == ["unfinished_run"]


def _truncated(dst: Path) -> Path:
    shutil.copytree(SAMPLES / "nc-profile-toast", dst)
    for f in (dst / "frames").glob("*.png"):
        f.write_bytes(f.read_bytes()[:400])  # the header reads; the pixels are cut off
    return dst


def test_a_screenshot_that_cannot_be_decoded_is_frame_unreadable_in_validate_and_score(tmp_path):
    _truncated(tmp_path / "runs" / "toast")
    v = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--format", "json"])
    probs = json.loads(v.stdout)["problems"]
    frames = [p for p in probs if p["field"].startswith("frames.")]
    assert frames and {p["slug"] for p in frames} == {"frame_unreadable"}
    assert "cannot be decoded" in frames[0]["hint"] and "frames/" in frames[0]["message"]
    s = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L")])
    run_level = [ln for ln in s.output.splitlines() if "steps have no readable screenshot" in ln]
    assert run_level and run_level[0].endswith("[frame_unreadable]"), s.output
    assert "frames_not_found" not in s.output and "copy the run's screenshots" not in s.output
    assert "check frames/" in s.output  # the hint names the file


def test_a_missing_screenshot_is_still_frames_not_found(tmp_path):
    d = tmp_path / "runs" / "toast"
    shutil.copytree(SAMPLES / "nc-profile-toast", d)
    shutil.rmtree(d / "frames")
    s = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L")])
    assert "[frames_not_found]" in s.output and "[frame_unreadable]" not in s.output
