"""Issue 32: a run that ended without an answer has failed (verdict_source no_answer), unless a stronger source
says otherwise, where its format declares that its harness ends runs only by an answer or a limit (issue 47:
run.json ``ends = "answer"``; tests/test_run_endings.py covers the other declarations); an explicit give-up is
an answer and stays unknown; every table says how many runs have a verdict. The runs are sample runs recorded
in Chromium, cut as a harness cuts them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajcheck.scoring.pipeline import ScoreOptions, score_paths

from conftest import REALRUNS, SAMPLES


def _variant(tmp: Path, src: str, name: str, *, keep: int | None = None, status: str | None = None,
             score: float | None = None, last: dict | None = None, ends: str | None = "answer") -> Path:
    """A copy of sample run ``src`` named ``name``: its first ``keep`` steps, outcome ``status`` and ``score``,
    ``last`` merged into its last step, and how its harness ends runs (``ends``; None: not declared)."""
    dst = tmp / name
    shutil.copytree(SAMPLES / src, dst)
    (dst / "contract.json").unlink(missing_ok=True)
    meta = json.loads((dst / "run.json").read_text())
    meta["run_id"] = name
    meta["outcome"] = {k: v for k, v in (("status", status), ("score", score)) if v is not None}
    if ends is not None:
        meta["ends"] = ends
    (dst / "run.json").write_text(json.dumps(meta))
    steps = [json.loads(line) for line in (dst / "steps.jsonl").read_text().splitlines()][:keep]
    if last:
        steps[-1] = {**steps[-1], **last}
    (dst / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    return dst


def _verdicts(*runs: Path) -> dict[str, tuple]:
    report = score_paths(list(runs), ScoreOptions(), jobs=1)
    return {r.run["run_id"]: (r.run["eval_final_verdict"], r.run["verdict_source"], r.run["verdict_reason"],
                              r.run["claim_reason"], r.run["final_confidence"]) for r in report.results}


def test_no_answer_is_a_fail_a_give_up_is_not_and_an_evaluator_outranks_both(tmp_path):
    got = _verdicts(
        # the inbox run stopped by its step budget before it answered (its DONE cut off)
        _variant(tmp_path, "nc-inbox-read", "budget", keep=1, status="max_steps"),
        # the stale-element run ended by the executor error of its second step
        _variant(tmp_path, "stale-element-recovery", "executor-error", keep=2, status="error"),
        # an explicit infeasible report is an answer: unknown, as before
        _variant(tmp_path, "nc-inbox-read", "infeasible",
                 last={"action": {"type": "DONE", "text": "This task is infeasible.", "infeasible": True}}),
        # the harness's FAIL (OSWorld's "infeasible") is an answer too
        _variant(tmp_path, "nc-inbox-read", "fail-step", last={"action": {"type": "FAIL"}}),
        # the benchmark's evaluator passed a run that never answered: the evaluator decides
        _variant(tmp_path, "nc-inbox-read", "evaluator-pass", keep=1, status="max_steps", score=1.0),
    )
    assert got["budget"] == ("fail", "no_answer", "no_answer", "no_done", 0.6)
    assert got["executor-error"][:4] == ("fail", "no_answer", "no_answer", "no_done")
    assert got["infeasible"][:4] == ("unknown", "none", "no_verdict", "agent_reported_failure")
    assert got["fail-step"][:3] == ("unknown", "none", "no_verdict")
    assert got["evaluator-pass"][:3] == ("pass", "evaluator", "evaluator_only")


@pytest.mark.realruns
@pytest.mark.skipif(not REALRUNS.is_dir(), reason="../shared/realruns is absent (a user's clone has none)")
def test_the_browsergym_runs_keep_their_evaluator_verdicts():
    report = score_paths([REALRUNS / "browsergym-fork"], ScoreOptions(), jobs=1)
    rows = {r.run["run_id"].rsplit("_on_", 1)[1]: r.run for r in report.results}
    for r in rows.values():
        if r["evaluator_verdict"] is not None:
            assert (r["eval_final_verdict"], r["verdict_source"]) == (r["evaluator_verdict"], "evaluator"), r["run_id"]
    # the two runs that reported the task infeasible and passed WorkArena's evaluator stay passes
    assert [r["eval_final_verdict"] for r in rows.values() if r["claim_reason"] == "agent_reported_failure"
            and r["evaluator_verdict"] == "pass"] == ["pass", "pass"]
    # the one run whose log ends early (no summary, its last step absent) had no answer; BrowserGym's task may end
    # an episode itself (its validate() says done), so the end of the run is no evidence: unknown, not a fail
    cut = rows["workarena.servicenow.navigate-and-order-ipad-pro-l3_31"]
    assert (cut["eval_final_verdict"], cut["verdict_reason"], cut["claim_reason"]) == (
        "unknown", "harness_may_stop", "no_done")


@pytest.mark.slow
def test_every_table_says_how_many_runs_have_a_verdict(sample_ledger, tmp_path):
    import trajcheck
    from trajcheck.base.verdicts import coverage

    runs = trajcheck.query(sample_ledger, "select status, eval_final_verdict, verdict_source from runs").records()
    c = coverage(runs)
    # 28 sample runs: nc-inbox-read has no verdict (it answered; nothing could check the answer)
    assert (c.runs, c.decided, c.unknown) == (28, 27, 1) and sum(c.by_source.values()) == 27
    text = c.text()
    assert text.startswith("verdict for 27 of 28 runs: contract ") and text.endswith("; unknown 1")
    arms = trajcheck.compare([sample_ledger], by="config.perceptual_verifier").to_json()["arms"]
    assert sum(a["verdicts"]["runs"] for a in arms) == 19 and all(a["verdicts"]["unknown"] == 0 for a in arms)
    table = json.loads(trajcheck.export_table(sample_ledger, "summary", "json"))
    assert table["rows"][0]["verdicts"] == c.to_json()  # export's JSON rows are records of plain values
    agreed = trajcheck.agree(sample_ledger, SAMPLES / "labels.json")
    assert list(agreed)[0] == "verdicts" and agreed["verdicts"] == c.to_json()
    assert all(k["items"] > 0 for k in agreed["kappa"])
    page = (Path(trajcheck.report(sample_ledger, tmp_path / "rep", max_runs=0).index)).read_text()
    assert text in page


@pytest.mark.slow
def test_scoring_a_batch_again_gives_a_changed_run_the_verdict_a_whole_score_gives(tmp_path):
    """An incremental score rescores only the run that changed, and gives it the verdict a whole score gives: a
    run's no-answer verdict follows its own declaration, so the runs beside it do not matter."""
    import trajcheck

    runs = tmp_path / "runs"
    runs.mkdir()
    _variant(runs, "nc-inbox-read", "answered")
    cut = _variant(runs, "nc-inbox-read", "budget", keep=1, status="max_steps")
    ledger = tmp_path / "ledger"
    sql = "select run_id, eval_final_verdict, verdict_reason from runs order by run_id"
    trajcheck.score([runs], ledger, jobs=1)
    whole = trajcheck.query(ledger, sql).to_json()
    assert whole[1]["verdict_reason"] == "no_answer"
    meta = json.loads((cut / "run.json").read_text())
    meta["outcome"]["status"] = "error"  # the cut-off run changes; the answered one does not
    (cut / "run.json").write_text(json.dumps(meta))
    res = trajcheck.score([runs], ledger, jobs=1)
    assert res.skipped == ["answered"]
    assert trajcheck.query(ledger, sql).to_json() == whole
    alone = tmp_path / "alone"
    trajcheck.score([cut], alone, jobs=1)  # the cut-off run in a batch of its own, where no run answers: the same
    assert trajcheck.query(alone, sql).to_json()[0]["verdict_reason"] == "no_answer"
