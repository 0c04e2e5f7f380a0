"""Judges users already run (issue 39, part 5): ``score --judgments FILE`` records each row as a judge of its
run, combined with the recorded judge; a changed file rescores; a run not in the batch is a warning naming it;
``agree`` scores each judge against labels, contracts and evaluators; the report shows each judge's reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.analyzers.contract import NOT_APPLICABLE
from trajcheck.analyzers.referee import Judge, combine_judges, decide
from trajcheck.cli.main import app
from trajcheck.errors import UsageError
from trajcheck.scoring.judgments import read_judgments

from conftest import SAMPLES

RUNS = ("terms-checkbox-on", "terms-checkbox-off", "nc-inbox-read")


def _judge(name: str, verdict: str, conf: float | None = None) -> Judge:
    return Judge(name, verdict, None, conf, (f"{name} says {verdict}",), True, "judgments")


def test_read_csv_jsonl_and_online_mind2web(tmp_path):
    csv_file = tmp_path / "gpt.csv"
    csv_file.write_text("run_id,verdict,confidence,judge,reason\nr1,pass,0.8,gpt-judge,all done\nr2,FAIL,,,\n")
    got = read_judgments(csv_file)
    assert [(j.run_id, j.judge, j.verdict, j.confidence, j.reason, j.where) for j in got] == [
        ("r1", "gpt-judge", "pass", 0.8, "all done", "gpt.csv:2"), ("r2", "gpt", "fail", None, None, "gpt.csv:3")]
    jsonl = tmp_path / "j.jsonl"
    jsonl.write_text('{"run_id": "r1", "verdict": "fail", "reason": "no toast"}\n\n'
                     '{"run_id": "r2", "verdict": "pass"}\n')
    assert [(j.run_id, j.verdict, j.where) for j in read_judgments(jsonl)] == [("r1", "fail", "j.jsonl:1"),
                                                                              ("r2", "pass", "j.jsonl:3")]
    # Online-Mind2Web's src/run.py writes one object a line into a .json file
    om2w = tmp_path / "WebJudge_Online_Mind2Web_eval_o4-mini_score_threshold_3_auto_eval_results.json"
    om2w.write_text(json.dumps({"task_id": "fb7b4f78", "task": "Find a cheap flight", "predicted_label": 1,
                                "evaluation_details": {"response": "Thoughts: ... Status: success",
                                                       "predicted_label": 1}}) + "\n"
                    + json.dumps({"task_id": "a1", "predicted_label": 0,
                                  "evaluation_details": {"response": "Status: failure"}}) + "\n")
    got = read_judgments(om2w)
    name = "WebJudge_Online_Mind2Web_eval_o4-mini_score_threshold_3"
    assert [(j.run_id, j.judge, j.verdict, j.reason) for j in got] == [
        ("fb7b4f78", name, "pass", "Thoughts: ... Status: success"), ("a1", name, "fail", "Status: failure")]


@pytest.mark.parametrize("text, says", [
    ("run_id,verdict\nr1,maybe\n", "x.csv:2: verdict must be pass or fail (got 'maybe')"),
    ("run_id,verdict,confidence\nr1,pass,1.5\n", "x.csv:2: confidence must be a number from 0 to 1"),
    ("run_id,verdict\n,pass\n", "x.csv:2: run_id is empty"),
    ("run,verdict\nr1,pass\n", "needs the columns run_id and verdict"),
    ("run_id,verdict,judge\nr1,pass,a\nr1,fail,a\n", "x.csv:3: judge 'a' already judged run 'r1' at x.csv:2"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, text, says):
    f = tmp_path / "x.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=None) as exc:
        read_judgments(f)
    assert says in str(exc.value)


def test_control_codes_and_nul_bytes(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"run_id": "r1", "verdict": "pass", "judge": "j\x1b[31m", "reason": "a\x1b[2Jb\x07"})
                 + "\n")
    (j,) = read_judgments(f)
    assert (j.judge, j.reason) == ("j\ufffd[31m", "a\ufffd[2Jb\ufffd")
    nul = tmp_path / "n.csv"
    nul.write_text("run_id,verdict,reason\nr1,pass,a\x00b\n")
    assert read_judgments(nul)[0].reason == "a\ufffdb"
    huge = tmp_path / "h.csv"
    huge.write_text("run_id,verdict,reason\nr1,pass,\"" + "x" * 200_000 + "\"\n")
    with pytest.raises(ValueError, match="h.csv, near line 2: not CSV"):
        read_judgments(huge)
    deep = tmp_path / "d.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ValueError, match="d.jsonl:1: not a JSON object"):
        read_judgments(deep)


def test_bad_jsonl_line_is_named(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"run_id": "r1", "verdict": "pass"}\nnot json\n')
    with pytest.raises(ValueError, match="x.jsonl:2: not a JSON object"):
        read_judgments(f)


def test_combining_judges_is_a_majority_and_a_tie_decides_nothing():
    assert combine_judges([]) is None
    one = _judge("a", "pass", 0.9)
    assert combine_judges([one]) is one
    j = combine_judges([_judge("a", "pass", 0.9), _judge("b", "pass", 0.7), _judge("c", "fail", 0.9)])
    assert j is not None and (j.model, j.verdict, j.confidence) == ("a+b", "pass", round(0.8 * 2 / 3, 3))
    assert j.reasons == ("a: pass (a says pass)", "b: pass (b says pass)", "c: fail (c says fail)")
    assert combine_judges([_judge("a", "pass"), _judge("b", "fail")]) is None
    # a judge is weaker than a programmatic source: against the contract it makes the run uncertain, alone it
    # decides with lower confidence, and a tie leaves the run to the other sources
    v = decide(NOT_APPLICABLE, j, None, True, evaluator="fail")
    assert (v.final, v.reason) == ("uncertain", "judge_disagreement")
    v = decide(NOT_APPLICABLE, j, None, True)
    assert (v.final, v.reason, v.source) == ("pass", "judge_only", "judge")


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("judgments")
    for name in RUNS:
        shutil.copytree(SAMPLES / name, tmp / "runs" / name)
    return tmp


def _rows(ledger: Path) -> dict[str, dict]:
    return {r["run_id"]: r for r in trajcheck.query(ledger, "select * from runs").to_json()}


@pytest.mark.slow
def test_judgments_are_recorded_and_a_changed_file_rescores(batch):
    a, b = batch / "a.csv", batch / "b.jsonl"
    a.write_text("run_id,verdict,confidence,judge,reason\n"
                 "terms-checkbox-on,pass,0.9,judge-a,the workspace page is shown\n"
                 "nc-inbox-read,fail,0.6,judge-a,<b>no</b> message opened\n"
                 "no-such-run,pass,,judge-a,\n")
    b.write_text(json.dumps({"run_id": "nc-inbox-read", "verdict": "fail", "judge": "judge-b"}) + "\n")
    ledger = batch / "ledger"
    res = trajcheck.score([batch / "runs"], ledger, jobs=1, ocr="off", judgments=[a, b])
    unknown = [p for p in res.problems if p.slug == "judged_run_unknown"]
    assert len(unknown) == 1 and "'no-such-run'" in str(unknown[0]) and "a.csv:4" in str(unknown[0])
    rows = _rows(ledger)
    inbox = rows["nc-inbox-read"]
    assert [(j["judge"], j["verdict"], j["source"]) for j in json.loads(inbox["judgments"])] == [
        ("judge-a", "fail", "a.csv:3"), ("judge-b", "fail", "b.jsonl:1")]
    assert (inbox["judge_model"], inbox["judge_verdict"], inbox["judge_source"]) == ("judge-a+judge-b", "fail",
                                                                                     "judgments")
    assert rows["terms-checkbox-off"]["judgments"] is None
    on = rows["terms-checkbox-on"]
    assert on["judge_verdict"] == "pass" and on["judge_source"] == "judgments"
    # unchanged: nothing rescored, and the unknown run still named
    again = trajcheck.score([batch / "runs"], ledger, jobs=1, ocr="off", judgments=[a, b])
    assert again.scored == 0 and any(p.slug == "judged_run_unknown" for p in again.problems)
    # a changed verdict rescores the run it names, and only that run
    a.write_text(a.read_text().replace("terms-checkbox-on,pass,0.9", "terms-checkbox-on,fail,0.9"))
    third = trajcheck.score([batch / "runs"], ledger, jobs=1, ocr="off", judgments=[a, b])
    assert third.scored == 1 and sorted(third.skipped) == ["nc-inbox-read", "terms-checkbox-off"]
    assert _rows(ledger)["terms-checkbox-on"]["judge_verdict"] == "fail"
    # a judgment removed (file b left out) rescores the run it named
    fourth = trajcheck.score([batch / "runs"], ledger, jobs=1, ocr="off", judgments=[a])
    assert fourth.scored == 1 and [j["judge"] for j in json.loads(_rows(ledger)["nc-inbox-read"]["judgments"])] == [
        "judge-a"]
    a.write_text(a.read_text().replace("terms-checkbox-on,fail,0.9", "terms-checkbox-on,pass,0.9"))
    trajcheck.score([batch / "runs"], ledger, jobs=1, ocr="off", judgments=[a, b])


def test_bad_judgments_file_is_a_usage_error(batch, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("run_id,verdict\nx,perhaps\n")
    with pytest.raises(UsageError, match="--judgments .*bad.csv: bad.csv:2: verdict must be pass or fail"):
        trajcheck.score([batch / "runs"], tmp_path / "l", jobs=1, ocr="off", judgments=[bad])
    assert not (tmp_path / "l").exists()
    res = CliRunner().invoke(app, ["score", str(batch / "runs"), "--out", str(tmp_path / "l"),
                                   "--judgments", str(bad)])
    assert res.exit_code == 2 and "verdict must be pass or fail" in res.output


@pytest.mark.slow
def test_agree_scores_each_judge_and_the_report_shows_reasons(batch, tmp_path):
    ledger = batch / "ledger"
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"terms-checkbox-on": {"outcome": "pass"}, "nc-inbox-read": {"outcome": "pass"},
                                  "terms-checkbox-off": {"outcome": "fail"}}))
    res = CliRunner().invoke(app, ["agree", str(ledger), "--labels", str(labels), "--format", "json"])
    assert res.exit_code == 0, res.output
    got = {(j["judge"], j["against"]): j for j in json.loads(res.output)["judges"]}
    a = got[("judge-a", "labels")]
    # judge-a: pass on a labelled pass (tp), fail on a labelled pass (fn)
    assert (a["tp"], a["fp"], a["tn"], a["fn"], a["covered"], a["labelled"]) == (1, 0, 0, 1, 2, 3)
    assert a["precision"]["rate"] == 1.0 and a["recall"]["rate"] == 0.5
    assert got[("judge-b", "labels")]["covered"] == 1
    assert {k[1] for k in got} == {"labels", "contract", "evaluator"}
    res = CliRunner().invoke(app, ["agree", str(ledger), "--labels", str(labels)])
    assert "judges of score --judgments" in res.output and "judge-a" in res.output
    out = tmp_path / "report"
    res = CliRunner().invoke(app, ["report", str(ledger), "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = next(p.read_text() for p in out.rglob("*.html") if "no</b> message opened" not in p.read_text()
                and "&lt;b&gt;no&lt;/b&gt; message opened" in p.read_text())
    assert "judge-b: <span class=neg>fail</span>" in page
