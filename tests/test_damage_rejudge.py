"""A failed reset found across runs (queries/resets.py) reaches what the damage decides: the run's failure is not
the agent's to avoid, and its steps leave the process score; when the finding is cleared, both come back as they
were scored (issue 50, review item 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from trajcheck.analyzers import control, process
from trajcheck.store import ledger

from conftest import SAMPLES, copy_run, run_json

JUDGED = ("damage", "failure_control", "decisive_control", "process_score", "process_evidence")


def _rows(path: Path, table: str) -> list[dict[str, Any]]:
    con = ledger.connect(path)
    try:
        cur = con.execute(f"select * from {table}")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def test_judging_again_from_the_rows_gives_what_scoring_gave(sample_ledger: Path) -> None:
    """The row-based functions agree with the score-time ones on every sample run (28 runs: several failure
    modes, decisive errors, blocks and process scores), so a rewrite changes only what the damage changes."""
    runs = _rows(sample_ledger, "runs")
    steps: dict[str, list[dict[str, Any]]] = {}
    for s in _rows(sample_ledger, "steps"):
        steps.setdefault(s["run_id"], []).append(s)
    assert len(runs) == 28
    assert {r["failure_control"] for r in runs} >= {"controllable", "uncontrollable"}
    assert any(json.loads(r["process_evidence"]).get("blocked") for r in runs)
    for r in runs:
        assert control.of_row(r) == (r["failure_control"], r["decisive_control"]), r["run_id"]
        found = process.of_rows(r, steps.get(r["run_id"], []))
        assert (found.score, found.evidence()) == (r["process_score"], r["process_evidence"]), r["run_id"]


def _copies(runs: Path, n: int) -> None:
    for i in range(1, n + 1):
        run = copy_run(SAMPLES / "drift-loop-off", runs / f"r{i}")
        meta = json.loads((run / "run.json").read_text())
        meta["run_id"] = f"r{i}"
        (run / "run.json").write_text(json.dumps(meta))


@pytest.mark.slow
def test_a_failed_reset_found_across_runs_is_no_failure_of_the_agent(tmp_path: Path) -> None:
    """Four repeats of drift-loop-off, r4 starting on another task's screen: r4 is reset_failed, its failure and
    decisive error uncontrollable, its steps blocked (no process score), and `failures` counts it apart from the
    controllable ones; once r2 and r3 are gone the finding is cleared and r4 is judged as it was scored."""
    runs = tmp_path / "runs"
    _copies(runs, 4)
    (runs / "r4" / "frames" / "001.png").write_bytes((SAMPLES / "captcha-blocked" / "frames" / "001.png").read_bytes())
    run_json("score", str(runs), "--out", str(tmp_path / "L"), "-q")
    got = {r["run_id"]: r for r in _rows(tmp_path / "L", "runs")}
    healthy = tuple(got["r1"][c] for c in JUDGED)
    assert healthy[:3] == (None, "controllable", "controllable")
    assert tuple(got["r4"][c] for c in JUDGED[:4]) == ("reset_failed", "uncontrollable", "uncontrollable", None)
    assert json.loads(got["r4"]["process_evidence"])["blocked"] == {"by": "damage: reset_failed", "from": 1,
                                                                    "steps": 5}
    assert got["r4"]["eval_final_verdict"] == "fail"  # the verdict is kept
    failures = run_json("failures", str(tmp_path / "L"))
    assert failures["arms"][0]["controllable"]["k"] == 3 and failures["arms"][0]["uncontrollable"] == 1
    before = {r: tuple(v[c] for c in JUDGED[1:]) for r, v in got.items() if r != "r4"}

    shutil.rmtree(runs / "r2")
    shutil.rmtree(runs / "r3")  # r1 and r4: one other run is no agreement, the finding is cleared
    run_json("score", str(runs), "--out", str(tmp_path / "L"), "-q")
    got = {r["run_id"]: r for r in _rows(tmp_path / "L", "runs")}
    assert got["r4"]["damage"] is None
    assert (got["r4"]["failure_control"], got["r4"]["decisive_control"]) == ("controllable", "controllable")
    assert got["r4"]["process_score"] == 0.15  # its own first step, off the others', reached a new screen
    assert tuple(got["r1"][c] for c in JUDGED[1:]) == before["r1"]
