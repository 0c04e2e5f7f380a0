"""The held-out check of issue 50: runs with injected damage of each kind among healthy ones, scored together with
--expect: every damaged run found with its kind, no healthy run flagged, and the expected count right.

The batch: the 28 sample runs as they are; two more repeats of terms-checkbox-off (healthy); one copy of a sample
run per damage case of tests/test_damage.py (each kind from the log), a repeat of terms-checkbox-off whose first
frame is another task's screen (reset_failed from the frames) and a copy of validation-flash-on without its log
(no_log: its screenshots, DOM snapshots and contract left). The tasks file expects every task as often as the
batch runs it, and a task never run twice (2 missing).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajcheck.cli.main import app
from trajcheck.store import ledger

from conftest import SAMPLES, run_json
from test_damage import CASES


def _copy(sample: str, runs: Path, run_id: str) -> Path:
    dst = runs / run_id
    shutil.copytree(SAMPLES / sample, dst)
    meta = json.loads((dst / "run.json").read_text())
    meta["run_id"] = run_id
    (dst / "run.json").write_text(json.dumps(meta))
    return dst


@pytest.mark.slow
def test_held_out_damage_of_every_kind_is_found_and_no_healthy_run_is_flagged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    samples = sorted(p.name for p in SAMPLES.iterdir() if (p / "run.json").is_file())
    for name in samples:
        shutil.copytree(SAMPLES / name, runs / name)
    healthy = set(samples)
    for i in (1, 2):  # repeats of create-workspace under the same config: the start the frame check compares with
        _copy("terms-checkbox-off", runs, f"repeat-{i}")
        healthy.add(f"repeat-{i}")
    want: dict[str, str] = {}
    for n, (kind, sample, edit, _) in enumerate(CASES):
        edit(_copy(sample, runs, f"damaged-{n}-{kind}"))
        want[f"damaged-{n}-{kind}"] = kind
    off = _copy("terms-checkbox-off", runs, "damaged-reset-frame")
    (off / "frames" / "001.png").write_bytes((SAMPLES / "captcha-blocked" / "frames" / "001.png").read_bytes())
    want["damaged-reset-frame"] = "reset_failed"
    nolog = runs / "damaged-no-log"
    shutil.copytree(SAMPLES / "validation-flash-on", nolog)
    (nolog / "run.json").unlink()
    (nolog / "steps.jsonl").unlink()
    want["damaged-no-log"] = "no_log"

    # every task as often as the batch runs it (the run without a log: validation-flash-on's task), and a ghost
    tasks = Counter(json.loads((SAMPLES / s / "run.json").read_text())["task_id"]
                    for s in [*samples, "terms-checkbox-off", "terms-checkbox-off", *[c[1] for c in CASES],
                              "terms-checkbox-off", "validation-flash-on"])
    (tmp_path / "tasks.txt").write_text("".join(f"{t} x {n}\n" for t, n in sorted(tasks.items())) + "ghost x 2\n")
    expected = sum(tasks.values()) + 2

    got = run_json("score", str(runs), "--out", str(tmp_path / "L"), "-q", "--expect", str(tmp_path / "tasks.txt"))
    con = ledger.connect(tmp_path / "L")
    try:
        rows = {r[0]: r[1:] for r in con.execute("select run_id, status, damage, damage_evidence, "
                                                 "eval_final_verdict from runs").fetchall()}
    finally:
        con.close()
    assert set(rows) == healthy | set(want)
    assert all(status == "ok" for status, *_ in rows.values())
    # every damaged run found, with its kind and its evidence
    assert {r: rows[r][1] for r in want} == want
    assert all(rows[r][2] for r in want)
    # no healthy run flagged
    assert {r: rows[r][1] for r in healthy if rows[r][1] is not None} == {}
    # the run without a log has no verdict; the frame check's run keeps its own
    assert rows["damaged-no-log"][3] == "unknown" and rows["damaged-reset-frame"][3] == "fail"
    # the expected count: every run of the batch scored, the ghost's 2 missing, the damaged ones counted
    [d] = got["expected"]
    # the run without a log says no task: its task lacks a run (missing), and it is counted apart (unknown_task),
    # never taken for the missing run
    lost = json.loads((SAMPLES / "validation-flash-on" / "run.json").read_text())["task_id"]
    assert (d["expected"], d["scored"], d["damaged"], d["missing"], d["invalid"], d["unexpected"]) == (
        expected, expected - 3, len(want) - 1, 3, 0, 0)
    assert d["missing_tasks"] == {"ghost": 2, lost: 1} and d["unknown_task"] == 1
    assert d["text"] == (f"scored {expected - 3} of {expected} expected runs; {len(want) - 1} damaged; 3 missing: "
                         f"ghost x2, {lost}; 1 run without a log (task unknown)")
    # redo lists the damaged runs and the missing ones
    redo = run_json("redo", str(tmp_path / "L"))["runs"]
    assert sorted(r["run_id"] for r in redo if r["run_id"]) == sorted(want)
    assert [r["task_id"] for r in redo if r["run_id"] is None].count("ghost") == 2
    res = CliRunner().invoke(app, ["export", str(tmp_path / "L"), "-f", "json"])
    [row] = json.loads(res.stdout)["rows"]
    assert (row["expected"], row["missing"], row["damaged"]) == (expected, 3, len(want))
    # by default over the expected runs: the 3 missing count as failures, and the run without a log (task unknown)
    # as one more run that did not pass
    assert row["success"]["n"] == expected + 1
