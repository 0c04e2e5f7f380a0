"""Issue 38 part 5: no verdict on a run that was not read. A run where most actions were not understood, or most
screenshots are missing, gets no pass or fail from its own evidence nor from the no-answer rule (unknown,
not_read); a contract or the benchmark's evaluator still decides. A batch in which no run has any answer gets no
no_answer failures (no_answer_action)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajcheck.analyzers.contract import NOT_APPLICABLE
from trajcheck.analyzers.evidence import EvidenceVerdict
from trajcheck.analyzers.referee import decide
from trajcheck.scoring import noanswer
from trajcheck.scoring.pipeline import ScoreOptions, score_paths
from trajcheck.scoring.rows import RunResult

from conftest import SAMPLES


def _copy(tmp: Path, src: str, name: str, *, frames: bool = True, unknown_actions: bool = False,
          keep: int | None = None, score: float | None = None, drop_done: bool = False) -> Path:
    dst = tmp / name
    shutil.copytree(SAMPLES / src, dst)
    (dst / "contract.json").unlink(missing_ok=True)
    meta = json.loads((dst / "run.json").read_text())
    meta["run_id"] = name
    meta["outcome"] = {"score": score} if score is not None else {}
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
        _copy(tmp_path, "nc-inbox-read", "answered"),  # the batch has an answer: the rule applies
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


def test_a_batch_in_which_no_run_answers_gets_no_no_answer_fails(tmp_path):
    # the inbox run cut before its DONE (as a step budget cuts it), three times
    runs = [_copy(tmp_path, "nc-inbox-read", f"cut-{i}", keep=1) for i in range(3)]
    before = _rows(*runs, _copy(tmp_path, "nc-swallowed-send", "answered"))
    for i in range(3):  # one run of the batch answers: the rule stands
        assert (before[f"cut-{i}"]["eval_final_verdict"], before[f"cut-{i}"]["verdict_source"]) == ("fail", "no_answer")
    alone = _rows(*runs)
    for rid in ("cut-0", "cut-1", "cut-2"):
        assert (alone[rid]["eval_final_verdict"], alone[rid]["verdict_reason"],
                alone[rid]["verdict_source"]) == ("unknown", "no_answer_action", "none")


def _fake(i: int, reason: str, claim: str = "no_done") -> RunResult:
    verdict = "fail" if reason == "no_answer" else "unknown"
    return RunResult({"run_id": f"r{i}", "status": "ok", "claim_reason": claim, "verdict_reason": reason,
                      "eval_final_verdict": verdict, "verdict_source": reason}, [])


def test_held_results_keep_their_order_and_a_later_answer_keeps_the_rule():
    runs = [_fake(0, "no_verdict"), _fake(1, "no_answer"), _fake(2, "no_verdict"), _fake(3, "agreement", "done"),
            _fake(4, "no_answer")]
    out = list(noanswer.batch_answers(runs))
    assert [r.run["run_id"] for r in out] == ["r0", "r1", "r2", "r3", "r4"]
    assert [r.run["eval_final_verdict"] for r in out] == ["unknown", "fail", "unknown", "unknown", "fail"]


def test_after_hold_results_with_no_answer_the_batch_is_taken_to_have_none():
    n = noanswer.HOLD + 5
    out = list(noanswer.batch_answers(_fake(i, "no_answer") for i in range(n)))
    assert [r.run["run_id"] for r in out] == [f"r{i}" for i in range(n)]
    assert {r.run["verdict_reason"] for r in out} == {"no_answer_action"}


def test_a_run_of_the_batch_outside_the_results_that_answered_keeps_the_rule():
    asked: list[int] = []

    def skipped_answered() -> bool:
        asked.append(1)
        return True

    out = list(noanswer.batch_answers([_fake(0, "no_answer"), _fake(1, "no_verdict")], skipped_answered))
    assert [r.run["verdict_reason"] for r in out] == ["no_answer", "no_verdict"] and asked == [1]
    n = noanswer.HOLD + 5  # past HOLD as well, and asked once
    out = list(noanswer.batch_answers((_fake(i, "no_answer") for i in range(n)), skipped_answered))
    assert {r.run["verdict_reason"] for r in out} == {"no_answer"} and asked == [1, 1]
    out = list(noanswer.batch_answers([_fake(0, "no_answer")], lambda: False))  # none answered anywhere
    assert [r.run["verdict_reason"] for r in out] == ["no_answer_action"]
    never = list(noanswer.batch_answers([_fake(0, "agreement", "done"), _fake(1, "no_answer")],
                                        lambda: 1 / 0))  # an answer in the results: nothing to ask
    assert [r.run["verdict_reason"] for r in never] == ["agreement", "no_answer"]
