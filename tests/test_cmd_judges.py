"""trajcheck judges (issue 49, item 2): on the sample runs, two made-up judges, one calling three failed runs
successes: the three are listed as conflicts with their step and evidence, no true success is, precision and
recall match the labels, and a second run is byte-identical."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import ROOT, SAMPLES

runner = CliRunner()
FALSE_SUCCESSES = ("consent-overlay-off", "nc-signin-gave-up", "terms-checkbox-off")


def _judges(tmp_path: Path) -> tuple[Path, Path]:
    """A lenient judge (the labels, but three failed runs called successes; a cost per run) as our CSV, and a
    strict one (the labels, judged twice, once flipping a run) as Agent-Eval-Refine's outputs.jsons."""
    labels = json.loads((SAMPLES / "labels.json").read_text())
    lenient = tmp_path / "lenient.csv"
    lenient.write_text("run_id,verdict,judge,cost_usd\n" + "".join(
        f"{rid},{'pass' if rid in FALSE_SUCCESSES else lab['outcome']},lenient,0.002\n"
        for rid, lab in sorted(labels.items())))
    aer = tmp_path / "strict"
    aer.mkdir()
    lines = [{"id": rid, "eval_info": {"thoughts": "...", "status": "success" if lab["outcome"] == "pass"
                                       else "failure"}} for rid, lab in sorted(labels.items())]
    lines.append({"id": "sequencer-correct", "eval_info": {"thoughts": "again", "status": "failure"}})
    (aer / "outputs.jsons").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return lenient, aer


def test_the_false_successes_are_the_conflicts(sample_ledger: Path, tmp_path: Path) -> None:
    lenient, strict = _judges(tmp_path)
    args = ["judges", str(sample_ledger), "--judgments", str(lenient), "--judgments", str(strict), "--labels",
            str(SAMPLES / "labels.json"), "--format", "json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert sorted({c["run_id"] for c in data["conflicts"]}) == list(FALSE_SUCCESSES)
    assert {c["judge"] for c in data["conflicts"]} == {"lenient"}
    shown = {(c["run_id"], c["kind"], c["step"], c["action"]) for c in data["conflicts"]}
    assert shown == {("consent-overlay-off", "dead_decisive_action", 1, "CLICK"),
                     ("consent-overlay-off", "missing_text", 2, "DONE"),
                     ("nc-signin-gave-up", "blocking_page", 1, "CLICK"),
                     ("nc-signin-gave-up", "admits_failure", 2, "DONE"),
                     ("terms-checkbox-off", "dead_decisive_action", 1, "CLICK"),
                     ("terms-checkbox-off", "contract_failed", 2, "DONE")}
    assert all(c["evidence"] and c["frame"] for c in data["conflicts"])
    by = {j["judge"]: j for j in data["judges"]}
    lab = by["lenient"]["labels"]
    assert (lab["tp"], lab["fp"], lab["tn"], lab["fn"]) == (15, 3, 10, 0)
    assert lab["precision"]["rate"] == round(15 / 18, 6) and lab["recall"]["rate"] == 1.0
    assert lab["false_success"]["k"] == 3 and lab["false_success"]["n"] == 13
    assert by["lenient"]["cost_per_run"] == 0.002 and by["lenient"]["conflicts"] == 3
    strict = by["agent-eval-refine:strict"]
    assert strict["flip"]["k"] == 1 and strict["flip"]["n"] == 1 and strict["conflicts"] == 0
    # sequencer-correct: one success and one failure from the strict judge is a tie, no verdict
    assert strict["labels"]["covered"] == 27 and strict["labels"]["fp"] == 0
    assert data["kappa"][0]["a"] == "agent-eval-refine:strict" and data["kappa"][0]["b"] == "lenient"
    assert data["sources"][1]["matching"]["by"]["run_id"] == 29
    again = runner.invoke(app, args)
    assert again.stdout == res.stdout
    md = runner.invoke(app, args[:-1] + ["md"])
    assert md.exit_code == 0 and md.stdout == runner.invoke(app, args[:-1] + ["md"]).stdout
    assert "| lenient | terms-checkbox-off | pass | contract_failed | 2 | DONE |" in md.stdout


def test_a_failure_the_contract_contradicts(sample_ledger: Path, tmp_path: Path) -> None:
    f = tmp_path / "harsh.jsonl"
    f.write_text(json.dumps({"run_id": "terms-checkbox-on", "verdict": "fail"}) + "\n"
                 + json.dumps({"run_id": "nc-inbox-read", "verdict": "pass"}) + "\n")
    res = runner.invoke(app, ["judges", str(sample_ledger), "--judgments", str(f), "--format", "json"])
    data = json.loads(res.stdout)
    assert [(c["run_id"], c["kind"]) for c in data["contradicted_failures"]] == [
        ("terms-checkbox-on", "contract_passed"), ("terms-checkbox-on", "evaluator_passed")]
    # nc-inbox-read: the evidence decided nothing, so a success there is no conflict
    assert data["conflicts"] == []


def test_judgments_by_folder_name_and_a_file_that_matches_nothing(sample_ledger: Path, tmp_path: Path) -> None:
    base = tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "web"
    (base / "captcha-blocked").mkdir(parents=True)
    (base / "captcha-blocked" / "result.txt").write_text("1.0\n")
    res = runner.invoke(app, ["judges", str(sample_ledger), "--judgments", str(tmp_path / "results"),
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["sources"][0]["matching"]["by"] == {"run_id": 1, "path": 0, "task_id": 0}
    assert [(c["run_id"], c["kind"], c["step"]) for c in data["conflicts"]] == [
        ("captcha-blocked", "blocking_page", 3)]
    other = tmp_path / "other.csv"
    other.write_text("run_id,verdict\nnot-a-run,pass\n")
    res = runner.invoke(app, ["judges", str(sample_ledger), "--judgments", str(other)])
    assert res.exit_code == 2
    assert "none of its 1 judgments names a run of the ledger: it names 'not-a-run'" in " ".join(res.stderr.split())


def test_no_judgments_and_a_bound_without_labels(sample_ledger: Path) -> None:
    res = runner.invoke(app, ["judges", str(sample_ledger)])
    assert res.exit_code == 2 and "no judgments" in res.stderr
    res = runner.invoke(app, ["judges", str(sample_ledger), "--max-false-success", "0.1"])
    assert res.exit_code == 2 and "--max-false-success needs --labels" in " ".join(res.stderr.split())


def test_cheapest_judge_under_a_bound(sample_ledger: Path, tmp_path: Path) -> None:
    lenient, _ = _judges(tmp_path)
    careful = tmp_path / "careful.csv"
    labels = json.loads((SAMPLES / "labels.json").read_text())
    careful.write_text("run_id,verdict,judge,cost_usd\n" + "".join(
        f"{rid},{lab['outcome']},careful,0.01\n" for rid, lab in sorted(labels.items())))
    res = runner.invoke(app, ["judges", str(sample_ledger), "--judgments", str(lenient), "--judgments", str(careful),
                              "--labels", str(SAMPLES / "labels.json"), "--max-false-success", "0.05",
                              "--format", "json"])
    assert json.loads(res.stdout)["cheapest"]["judge"] == "careful"


DOC = ROOT / "docs" / "judges.md"
BEGIN = "<!-- judges-example: begin (generated: tests/test_cmd_judges.py) -->\n"
END = "<!-- judges-example: end -->"


def test_the_worked_example_is_what_the_command_prints(sample_ledger: Path, tmp_path: Path) -> None:
    """docs/judges.md's worked example: the tables are the command's output, byte for byte (its headings one level
    down), and every figure its prose quotes is the command's."""
    lenient, strict = _judges(tmp_path)
    args = ["judges", str(sample_ledger), "--judgments", str(lenient), "--judgments", str(strict), "--labels",
            str(SAMPLES / "labels.json"), "--format"]
    md = runner.invoke(app, args + ["md"]).stdout
    assert str(tmp_path) not in md and md.startswith("## Judges of 28 runs\n")
    shown = "#" + md.replace("\n## ", "\n### ")
    text = DOC.read_text("utf-8")
    head, rest = text.split(BEGIN)
    block, tail = rest.split(END)
    if os.environ.get("TRAJCHECK_UPDATE_GOLDEN"):
        DOC.write_text(head + BEGIN + shown + END + tail, "utf-8")
        block = shown
    assert block == shown, "docs/judges.md's worked example is stale: TRAJCHECK_UPDATE_GOLDEN=1 writes it again"
    data = json.loads(runner.invoke(app, args + ["json"]).stdout)
    by = {j["judge"]: j for j in data["judges"]}
    le, st = by["lenient"], by["agent-eval-refine:strict"]
    lab = le["labels"]
    prose = " ".join(tail.split())
    assert f"`lenient` passes {le['passes']} runs and fails {le['fails']}." in prose
    assert (f"its precision is {lab['tp']} of {lab['tp'] + lab['fp']} ({100 * lab['precision']['rate']:.1f}%), its "
            f"recall {lab['tp']} of {lab['tp'] + lab['fn']}, and its false-success rate {lab['fp']} of "
            f"{lab['fp'] + lab['tn']} ({100 * lab['false_success']['rate']:.1f}%): of the {lab['fp'] + lab['tn']} "
            f"runs the labels fail, it passes the three above") in prose
    assert sorted({c["run_id"] for c in data["conflicts"]}) == list(FALSE_SUCCESSES) and lab["fp"] == 3
    assert f"its flip rate is {st['flip']['k']} of {st['flip']['n']}" in prose
    assert (f"it decides {st['passes'] + st['fails']} runs ({st['passes']} passes, {st['fails']} fails) with no false "
            "success") in prose and st["labels"]["fp"] == 0
    assert f"fails on that {100 * lab['false_success']['rate']:.1f}% (exit 1)" in prose
    intro = " ".join(head.split())
    assert f"at {le['cost_per_run']} USD a run" in intro and f"over the {data['runs']} sample runs" in intro
