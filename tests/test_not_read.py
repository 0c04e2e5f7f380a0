"""Issue 38 part 5: no verdict on a run that was not read. A run where most actions were not understood, or most
screenshots are missing, gets no pass or fail from its own evidence nor from the no-answer rule (unknown,
not_read); a contract or the benchmark's evaluator still decides."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajcheck.analyzers.contract import NOT_APPLICABLE
from trajcheck.analyzers.evidence import EvidenceVerdict
from trajcheck.analyzers.referee import decide
from trajcheck.scoring.pipeline import ScoreOptions, score_paths

from conftest import SAMPLES


def _copy(tmp: Path, src: str, name: str, *, frames: bool = True, unknown_actions: bool = False,
          keep: int | None = None, score: float | None = None, drop_done: bool = False,
          ends: str | None = "answer") -> Path:
    dst = tmp / name
    shutil.copytree(SAMPLES / src, dst)
    (dst / "contract.json").unlink(missing_ok=True)
    meta = json.loads((dst / "run.json").read_text())
    meta["run_id"] = name
    meta["outcome"] = {"score": score} if score is not None else {}
    if ends is not None:  # the harness ends runs only by an answer or a limit: the no-answer rule applies
        meta["ends"] = ends
    (dst / "run.json").write_text(json.dumps(meta))
    steps = [json.loads(line) for line in (dst / "steps.jsonl").read_text().splitlines()][:keep]
    if drop_done:
        steps = [s for s in steps if s["action"]["type"] != "DONE"]
    if unknown_actions:
        for s in steps:
            if s["action"]["type"] != "DONE":
                s["action"] = {"type": "UNKNOWN"}  # what a reader makes of an action it did not understand
    (dst / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    if not frames:
        shutil.rmtree(dst / "frames")
    return dst


def _rows(*runs: Path) -> dict[str, dict]:
    return {r.run["run_id"]: r.run for r in score_paths(list(runs), ScoreOptions(), jobs=1).results}


def test_a_run_whose_actions_or_screenshots_were_not_read_gets_no_verdict_from_its_evidence(tmp_path):
    rows = _rows(
        _copy(tmp_path, "nc-swallowed-send", "swallowed"),  # as recorded: the evidence fails it
        _copy(tmp_path, "nc-swallowed-send", "swallowed-unread", unknown_actions=True),
        _copy(tmp_path, "nc-profile-toast", "toast"),  # as recorded: the evidence passes it
        _copy(tmp_path, "nc-profile-toast", "toast-no-frames", frames=False),
        # the evaluator checked the final state itself: it still decides a run that was not read
        _copy(tmp_path, "captcha-blocked", "captcha-no-frames", frames=False, score=0.0),
    )
    assert (rows["swallowed"]["eval_final_verdict"], rows["swallowed"]["verdict_reason"]) == ("fail", "evidence_only")
    assert (rows["toast"]["eval_final_verdict"], rows["toast"]["verdict_reason"]) == ("pass", "evidence_only")
    for rid in ("swallowed-unread", "toast-no-frames"):
        r = rows[rid]
        assert (r["eval_final_verdict"], r["verdict_source"], r["verdict_reason"]) == ("unknown", "none", "not_read")
        assert r["false_claim"] is False
        assert "not_read" in " ".join(r["warnings"])  # the run-level warning says why
    r = rows["captcha-no-frames"]
    assert (r["eval_final_verdict"], r["verdict_source"]) == ("fail", "evaluator")


def test_a_run_not_read_that_ended_without_an_answer_is_not_a_no_answer_fail(tmp_path):
    rows = _rows(
        _copy(tmp_path, "nc-inbox-read", "answered"),
        _copy(tmp_path, "nc-pay-loop", "cut", keep=2, drop_done=True),
        _copy(tmp_path, "nc-pay-loop", "cut-unread", keep=2, drop_done=True, unknown_actions=True),
    )
    assert (rows["cut"]["eval_final_verdict"], rows["cut"]["verdict_source"]) in {("fail", "no_answer"),
                                                                                 ("fail", "evidence")}
    r = rows["cut-unread"]
    assert (r["eval_final_verdict"], r["verdict_reason"]) == ("unknown", "not_read")


def test_the_referee_keeps_contract_and_evaluator_and_drops_evidence_and_no_answer_when_not_read():
    contract = NOT_APPLICABLE
    ev = EvidenceVerdict("pass", ("success_after_last_high_risk@3: saved",), 0.6)
    assert decide(contract, None, None, True, ev, None, False, not_read=True).final == "unknown"
    assert decide(contract, None, None, False, None, None, True, not_read=True).reason == "not_read"
    v = decide(contract, None, None, True, ev, "fail", True, not_read=True)
    assert (v.final, v.source, v.false_claim) == ("fail", "evaluator", True)
    assert decide(contract, None, None, True, ev, None, False).final == "pass"  # read: the evidence decides
