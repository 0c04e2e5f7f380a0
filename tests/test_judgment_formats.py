"""Judges read as they write (issue 49, item 1): each format, made from the shape its project's code writes
(docs/judges.md names the file and commit), is recognised by its structure and read with no conversion; a folder
is walked; judgments are matched to runs by run id, folder or task id; further formats come through the entry
point group ``trajcheck.judgments``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.scoring.judgments import formats
from trajcheck.scoring.judgments.formats import format_of, read_path
from trajcheck.scoring.judgments.matching import JudgedRun, match, why_none
from trajcheck.scoring.judgments.model import FileJudgments, Judgment, JudgmentFormat


def _arb(reply: str | None, judge: str = "gpt-4o-noaxtree", cost: object = None) -> dict:
    """An AgentRewardBench judgment as scripts/run_judge.py writes it (keys in its order)."""
    return {"benchmark": "webarena", "goal": "Find the order", "agent": "GenericAgent-gpt-4o", "judge": judge,
            "judge_model_name": "gpt-4o-2024-11-20", "provider": "openai",
            "judge_args": {"use_screenshot": True, "use_axtree": False, "invert_sys_prompt": False},
            "completion_args": {"max_completion_tokens": 1024, "temperature": 0.0, "seed": 0},
            "cost": cost if cost is not None else {"input_price": 0.01, "output_price": 0.002, "total_price": 0.012,
                                                   "cached_price": 0.0},
            "response": None if reply is None else {
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-2024-11-20",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 3000, "completion_tokens": 200, "total_tokens": 3200}},
            "chat_messages": {"regular": [], "pruned": []},
            "trajectory_info": {"valid": True, "model": "gpt-4o", "trajectory_dir": "/trajs/webarena.12",
                                "seed": 0, "model_args": {}, "flags": {}, "summary_info": {"cum_reward": 0.0}}}


def test_agentrewardbench_folder_tags_status_error_and_cost(tmp_path: Path) -> None:
    judge = tmp_path / "judgments" / "webarena" / "GenericAgent-gpt-4o" / "gpt-4o-noaxtree"
    judge.mkdir(parents=True)
    (judge / "webarena.12.json").write_text(json.dumps(_arb(
        "<reasoning>The order page shows the total.</reasoning>\n<success>Successful</success>\n<side>No</side>")))
    (judge / "webarena.13.json").write_text(json.dumps(_arb("<reasoning>Stuck.</reasoning><success>Unsuccessful"
                                                            "</success>")))
    (judge / "webarena.14_error.json").write_text(json.dumps(
        {"error": "Error code: 400", "chat_messages": {}, "trajectory_info": {"valid": True}}))
    (judge / "webarena.15.json").write_text(json.dumps(_arb("I am not sure.")))
    aer = tmp_path / "judgments" / "webarena" / "GenericAgent-gpt-4o" / "aer"
    aer.mkdir()
    (aer / "webarena.12.json").write_text(json.dumps(_arb("Thoughts: the user wanted X and got it.\nStatus: success",
                                                          judge="aer", cost=0)))
    got = read_path(tmp_path / "judgments")
    assert got.files == {"agentrewardbench": 5}
    rows = [(j.run_id, j.judge, j.verdict, j.reason, j.cost_usd, j.tokens, j.keys) for j in got.judgments]
    assert rows == [
        ("webarena.12", "aer (gpt-4o-2024-11-20)", "pass", "the user wanted X and got it.", 0.0, 3200,
         ("webarena.12",)),
        ("webarena.12", "gpt-4o-noaxtree (gpt-4o-2024-11-20)", "pass", "The order page shows the total.", 0.012,
         3200, ("webarena.12",)),
        ("webarena.13", "gpt-4o-noaxtree (gpt-4o-2024-11-20)", "fail", "Stuck.", 0.012, 3200, ("webarena.12",))]
    assert [n.split(": ", 1)[1] for n in got.notes] == [
        "judge 'gpt-4o-noaxtree' failed on 'webarena.14' (Error code: 400)",
        "judge 'gpt-4o-noaxtree' gave no verdict on 'webarena.15' (no <success> or Status:)"]


def test_agent_eval_refine_outputs_jsons_with_repeats_as_samples(tmp_path: Path) -> None:
    log = tmp_path / "gpt4v-final-v3"
    log.mkdir()
    lines = [{"id": "traj_7", "eval_info": {"thoughts": "The cart shows the item.", "status": "success"}},
             {"id": "traj_8", "eval_info": {"thoughts": "Never submitted.", "status": "failure"}},
             {"id": "traj_7", "eval_info": {"thoughts": "No confirmation.", "status": "failure"}},
             {"id": "traj_9", "eval_info": {"answer": "yes"}}]
    (log / "outputs.jsons").write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = read_path(log / "outputs.jsons")
    assert got.files == {"agent-eval-refine": 1}
    assert [(j.run_id, j.judge, j.verdict, j.sample, j.reason) for j in got.judgments] == [
        ("traj_7", "agent-eval-refine:gpt4v-final-v3", "pass", "1", "The cart shows the item."),
        ("traj_8", "agent-eval-refine:gpt4v-final-v3", "fail", "1", "Never submitted."),
        ("traj_7", "agent-eval-refine:gpt4v-final-v3", "fail", "2", "No confirmation.")]
    assert got.notes == ["outputs.jsons:4: no success or failure status for 'traj_9' (got None)"]


def test_osworld_result_txt_tree_and_summary(tmp_path: Path) -> None:
    base = tmp_path / "results" / "pyautogui" / "screenshot" / "gpt-4o"
    for domain, example, score in (("chrome", "bb5e4c0d", "1.0"), ("gimp", "7a4deb26", "0.5")):
        d = base / domain / example
        d.mkdir(parents=True)
        (d / "result.txt").write_text(score + "\n")
        (d / "traj.jsonl").write_text(json.dumps({"step_num": 1, "action": "click"}) + "\n")  # the agent's log
    got = read_path(tmp_path / "results")
    assert got.files == {"osworld": 2} and got.unclaimed == 2
    assert [(j.run_id, j.verdict, j.score, j.keys) for j in got.judgments] == [
        ("bb5e4c0d", "pass", 1.0, ("chrome/bb5e4c0d",)), ("7a4deb26", "fail", 0.5, ("gimp/7a4deb26",))]
    summary = tmp_path / "summary"
    summary.mkdir()
    (summary / "results.json").write_text(json.dumps([
        {"application": "chrome", "task_id": "bb5e4c0d", "status": "success", "score": 1.0,
         "timestamp": "2025-01-01 10:00:00"},
        {"application": "gimp", "task_id": "7a4deb26", "status": "error", "score": 0.0,
         "timestamp": "2025-01-01 10:05:00", "err_message": "VM timed out"},
        {"application": "chrome", "task_id": "bb5e4c0d", "status": "success", "score": 0.0,
         "timestamp": "2025-01-01 11:00:00"}], indent=2) + "\n")
    got = read_path(summary / "results.json")
    assert [(j.run_id, j.verdict, j.score, j.sample, j.format) for j in got.judgments] == [
        ("bb5e4c0d", "pass", 1.0, "1", "osworld-summary"), ("bb5e4c0d", "fail", 0.0, "2", "osworld-summary")]
    assert got.notes == ["results.json[1]: task '7a4deb26' raised (VM timed out): not judged"]


def test_rubric_verifier_table_csv_and_jsonl(tmp_path: Path) -> None:
    csv_file = tmp_path / "verifier.csv"
    csv_file.write_text("task_id,outcome,process_score,explanation,steps\n"
                        "t1,success,0.9,all criteria met,3;5\nt2,0.25,0.4,wrong page,\n")
    got = read_path(csv_file)
    assert got.files == {"rubric-verifier": 1}
    assert [(j.run_id, j.judge, j.verdict, j.score, j.process_score, [c.step for c in j.cited], j.reason)
            for j in got.judgments] == [("t1", "verifier", "pass", None, 0.9, [3, 5], "all criteria met"),
                                        ("t2", "verifier", "fail", 0.25, 0.4, [], "wrong page")]
    jsonl = tmp_path / "rubric.jsonl"
    jsonl.write_text(json.dumps({"run_id": "r1", "outcome_score": 0.75, "process_score": 0.5,
                                 "verifier": "uv-1"}) + "\n")
    assert [(j.judge, j.verdict, j.score) for j in read_path(jsonl).judgments] == [("uv-1", "pass", 0.75)]


def test_cube_harness_episode_record_and_sidecar(tmp_path: Path) -> None:
    ep = tmp_path / "exp" / "episodes" / "traj-0001"
    ep.mkdir(parents=True)
    record = {"evaluation_id": "exp", "sample_id": "miniwob.click-button", "is_correct": False, "score": 0.0,
              "trajectory_id": "traj-0001", "timestamp": 1.0, "num_turns": 6, "n_agent_steps": 3, "n_env_steps": 3,
              "judge_output": {"analysis": "...", "outcome": "success_lucky", "summary": "Clicked the button.",
                               "primary_blame": "none", "primary_blame_confidence": 4, "other_blames": [],
                               "evidence": [{"step": 2, "quote": "click('b12')"}], "hypothesis": "",
                               "hypothesis_confidence": 1},
              "judge_metadata": {"model": "claude-sonnet-4-6", "prompt_tokens": 900, "completion_tokens": 100,
                                 "cost_usd": 0.02, "duration_s": 3.1, "timestamp": 2.0}}
    (ep / "episode_record.json").write_text(json.dumps(record, indent=2))
    other = tmp_path / "exp" / "episodes" / "traj-0002"
    other.mkdir()
    (other / "judge_output.json").write_text(json.dumps({
        "judge_output": {**record["judge_output"], "outcome": "almost", "summary": "Typed into the wrong box.",
                         "primary_blame": "model_capability", "evidence": [{"step": 1, "quote": "fill('a1')"}]},
        "judge_metadata": record["judge_metadata"]}, indent=2))
    (tmp_path / "exp" / "experiment_record.json").write_text(json.dumps({"evaluation_id": "exp"}))
    got = read_path(tmp_path / "exp")
    assert got.files == {"cube-harness": 2} and got.unclaimed == 1
    a, b = got.judgments
    assert (a.run_id, a.judge, a.verdict, a.cost_usd, a.tokens, a.keys) == (
        "traj-0001", "cube-harness judge (claude-sonnet-4-6)", "pass", 0.02, 1000, ("miniwob.click-button",))
    assert [(c.step, c.quote) for c in a.cited] == [(2, "click('b12')")]
    assert (b.run_id, b.verdict, b.reason) == ("traj-0002", "fail",
                                               "Typed into the wrong box. (primary blame: model_capability)")


def test_ours_and_online_mind2web_are_kept_with_new_fields(tmp_path: Path) -> None:
    f = tmp_path / "mine.jsonl"
    f.write_text(json.dumps({"run_id": "r1", "verdict": "pass", "score": 4, "process_score": 0.5, "steps": [2, 3],
                             "cost_usd": 0.003, "tokens": 1200, "sample": "a"}) + "\n"
                 + json.dumps({"run_id": "r1", "verdict": "fail", "sample": "b"}) + "\n")
    a, b = read_path(f).judgments
    assert (a.score, a.process_score, [c.step for c in a.cited], a.cost_usd, a.tokens, a.sample) == (
        4.0, 0.5, [2, 3], 0.003, 1200, "a")
    assert a.to_json() == {"judge": "mine", "verdict": "pass", "confidence": None, "reason": None,
                           "source": "mine.jsonl:1", "score": 4.0, "process_score": 0.5,
                           "cited": [{"step": 2, "quote": None}, {"step": 3, "quote": None}], "cost_usd": 0.003,
                           "tokens": 1200, "sample": "a"}
    assert b.to_json() == {"judge": "mine", "verdict": "fail", "confidence": None, "reason": None,
                           "source": "mine.jsonl:2", "sample": "b"}
    om2w = tmp_path / "WebJudge_Online_Mind2Web_eval_o4-mini_score_threshold_3_auto_eval_results.json"
    om2w.write_text(json.dumps({"task_id": "fb7b", "predicted_label": 0,
                                "evaluation_details": {"response": "Status: failure"}}) + "\n")
    assert format_of(om2w).name == "table"
    (j,) = read_path(om2w).judgments
    assert (j.run_id, j.verdict, j.format) == ("fb7b", "fail", "online-mind2web")


def test_the_same_judge_in_several_files_gives_samples(tmp_path: Path) -> None:
    for i in (1, 2):
        (tmp_path / f"run{i}.csv").write_text(f"run_id,verdict,judge\nr1,{'pass' if i == 1 else 'fail'},j\n")
    got = read_path(tmp_path)
    assert [(j.run_id, j.sample) for j in got.judgments] == [("r1", "run1.csv"), ("r1", "run2.csv")]


def test_matching_by_run_id_folder_and_task(tmp_path: Path) -> None:
    runs = [JudgedRun("r-a", "results/chrome/bb5e4c0d", "t1"), JudgedRun("r-b", "runs/webarena.13", "t2"),
            JudgedRun("r-c", "runs/c", "t3"), JudgedRun("r-d", "runs/d", "t3")]

    def j(rid: str, *keys: str) -> Judgment:
        return Judgment(rid, "x", "pass", None, None, "f:1", keys=keys)

    m = match([j("r-a"), j("bb5e4c0d"), j("nothing", "chrome/bb5e4c0d"), j("webarena.13"), j("t1"), j("t3"),
               j("zzz")], runs)
    assert [(x.run_id, rid, how) for x, rid, how in m.matched] == [
        ("r-a", "r-a", "run_id"), ("bb5e4c0d", "r-a", "path"), ("nothing", "r-a", "path"),
        ("webarena.13", "r-b", "path"), ("t1", "r-a", "task_id")]
    assert [x.run_id for x in m.unmatched] == ["t3", "zzz"] and m.ambiguous == {"t3": 2}
    none = match([j("t3"), j("zzz")], runs)
    assert why_none("x.csv", [j("t3"), j("zzz")], runs, none) == (
        "x.csv: none of its 2 judgments names a run of the ledger: it names 't3', 'zzz'; the ledger's 4 runs are "
        "known by their run_id ('r-a', 'r-b', 'r-c'...), their folder's name and their task_id; task 't3' has 2 "
        "runs, so a judgment naming it must name the run")


def test_a_file_no_format_claims(tmp_path: Path) -> None:
    f = tmp_path / "labels.json"
    f.write_text('{\n  "r1": "pass"\n}\n')
    with pytest.raises(ValueError, match="no judgments format recognises the file; the formats: agentrewardbench"):
        read_path(f)


def _acme_read(path: Path) -> FileJudgments:
    v = path.read_text().split()
    return FileJudgments([Judgment(v[0], "acme", "pass" if v[1] == "OK" else "fail", None, None, path.name)])


ACME = JudgmentFormat("acme", "acme verdict files", "tests", lambda name, head: name.endswith(".acme"), _acme_read)


def test_entry_point_group_adds_a_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class EP:
        def __init__(self, name: str, value: str, obj: object):
            self.name, self.value, self.obj = name, value, obj

        def load(self) -> object:
            return self.obj

    points = [EP("acme", "acme_judge:ACME", ACME), EP("broken", "acme_judge:NOPE", 42),
              EP("table", "trajcheck.scoring.judgments.tables:OURS", None)]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: points if group == formats.GROUP else [])
    formats.reset()
    try:
        (tmp_path / "r1.acme").write_text("r1 OK\n")
        got = read_path(tmp_path)
        assert [(j.run_id, j.judge, j.verdict) for j in got.judgments] == [("r1", "acme", "pass")]
        assert got.notes == ["trajcheck.judgments entry point 'broken' (acme_judge:NOPE) is a int, not a "
                             "trajcheck.scoring.judgments.model.JudgmentFormat"]
    finally:
        formats.reset()
