"""The command line: help, output formats, exit codes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app

runner = CliRunner()
COMMANDS = ["score", "validate", "query", "columns", "formats", "timeline", "best-of", "compare", "check", "agree", "export",
            "report"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_has_help_with_an_example(cmd):
    res = runner.invoke(app, [cmd, "--help"])
    assert res.exit_code == 0
    assert "Example: trajcheck " + cmd in " ".join(res.output.split())


def test_query_json_is_exactly_the_library_result(sample_ledger):
    sql = "select run_id, n_steps, effect_warning_steps from runs order by run_id"
    res = runner.invoke(app, ["query", str(sample_ledger), sql, "--format", "json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == ledger.query(sample_ledger, sql).records()


def test_query_csv_and_table(sample_ledger):
    res = runner.invoke(app, ["query", str(sample_ledger), "select count(*) as n from steps", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows[0] == ["n"] and int(rows[1][0]) > 0
    res = runner.invoke(app, ["query", str(sample_ledger), "select count(*) as n from steps"])
    assert res.exit_code == 0 and rows[1][0] in res.stdout


def test_bad_sql_is_exit_3_with_one_line(sample_ledger):
    res = runner.invoke(app, ["query", str(sample_ledger), "select * from nowhere"])
    assert res.exit_code == 3
    assert "query failed" in res.output and "Traceback" not in res.output


@pytest.mark.slow
def test_score_json_output_and_exit_code(samples, tmp_path):
    res = runner.invoke(app, ["score", str(samples), "--out", str(tmp_path / "L"), "--format", "json", "-q",
                              "--jobs", "2"])
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    rows = result["runs"]
    assert rows and all(r["status"] == "ok" for r in rows) and result["ok"] is True
    assert (result["scored"], result["invalid"], result["ledger"]) == (len(rows), [], str(tmp_path / "L"))
    got = ledger.query(tmp_path / "L", "select run_id, effect_no_effect from runs order by run_id").rows
    assert sorted((r["run_id"], r["effect_no_effect"]) for r in rows) == got


@pytest.mark.slow
def test_no_verifier_is_the_ablation_toggle(samples, tmp_path):
    res = runner.invoke(app, ["score", str(samples), "--out", str(tmp_path / "L"), "--no-verifier", "-q", "-j", "1"])
    assert res.exit_code == 0
    rows = ledger.query(tmp_path / "L", "select distinct effect_reason, action_effect_observed from steps").rows
    assert rows == [("verifier_off", None)]
    assert ledger.query(tmp_path / "L", "select distinct perceptual_summary from runs").rows == [("{}",)]


def test_usage_errors_are_exit_2(tmp_path):
    assert runner.invoke(app, ["score", str(tmp_path), "--threshold", "99"]).exit_code == 2
    assert runner.invoke(app, ["columns", "--table", "nope"]).exit_code == 2


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("trajcheck ")


def test_silence_is_a_bug_json_no_reader_claims_exits_3(tmp_path):
    """Issue 14: a folder of JSON and images that no reader claims is reported, not "checked 0 runs"."""
    from conftest import SAMPLES

    logs = tmp_path / "logs" / "episode-1"
    logs.mkdir(parents=True)
    (logs / "my-harness.json").write_text('{"turns": [{"act": "click", "shot": "s1.png"}]}')
    (logs / "s1.png").write_bytes((SAMPLES / "consent-overlay-on" / "frames" / "001.png").read_bytes())
    for cmd in (["validate", str(tmp_path / "logs"), "--format", "json"],
                ["score", str(tmp_path / "logs"), "--out", str(tmp_path / "L")]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == 3, res.output
        assert "no_reader_claims" in res.output and "1 JSON file and 1 image in episode-1" in res.output
    half = tmp_path / "half"
    half.mkdir()
    (half / "steps.jsonl").write_text((SAMPLES / "nc-pay-loop" / "steps.jsonl").read_text())
    res = CliRunner().invoke(app, ["validate", str(half), "--format", "json"])
    assert res.exit_code == 1 and '"file_missing"' in res.output and '"run.json"' in res.output


def test_a_folder_no_reader_claims_is_named_beside_runs_that_scored(tmp_path):
    """Issue 27: runs/ holding a native run, a UI-TARS session and a folder no reader reads. score and validate
    name the folder (also when other runs were found), count it, and exit 1; the ignore file quiets it."""
    import shutil

    from conftest import ROOT, SAMPLES

    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES / "nc-pay-loop", runs / "nc-pay-loop")
    shutil.copytree(ROOT / "tests" / "fixtures" / "ui_tars" / "macos-session", runs / "uitars_task1")
    odd = runs / "claude_steps"
    odd.mkdir()
    (odd / "step_01.weird.json").write_text('{"whatever": 1}')
    (odd / "step_01.png").write_bytes((SAMPLES / "consent-overlay-on" / "frames" / "001.png").read_bytes())
    res = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "L"), "--quiet"])
    assert res.exit_code == 1, res.output
    assert "1 JSON file and 1 image in claude_steps" in res.output and "[no_reader_claims]" in res.output
    assert "scored 2 runs (0 invalid)" in res.output and "1 folder that no reader claims" in res.output
    assert "verdicts: " in res.output and "false claim" in res.output
    res = CliRunner().invoke(app, ["validate", str(runs)])
    assert res.exit_code == 1 and "claude_steps" in res.output
    (runs / ".trajcheckignore").write_text("# not runs\nclaude_*\n")
    res = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "L"), "--quiet"])
    assert res.exit_code == 0 and "claude_steps" not in res.output, res.output


def test_a_run_read_poorly_says_so_in_the_summary(tmp_path):
    """Issue 27: most actions not understood, or most screenshots not found, is a run-level warning that the
    score summary shows, so that a ledger of empty runs is never read as a result."""
    import json

    d = tmp_path / "runs" / "uitars_task1"
    d.mkdir(parents=True)
    steps = [{"step": i, "screenshot_path": f"sessions/x/step_{i:03d}.png", "model_reply": "I am not sure.",
              "parsed_action": {"type": "none"}} for i in range(7)]
    (d / "session_log.json").write_text(json.dumps({"task": "t", "steps": steps}))
    res = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "--quiet"])
    assert "uitars_task1" in res.output and "7 of 7 actions not understood" in res.output, res.output
    assert "7 of 7 steps have no readable screenshot" in res.output and "[frames_not_found]" in res.output


def test_the_score_table_shows_each_runs_verdict_and_false_claim(tmp_path):
    import json

    from conftest import SAMPLES

    res = CliRunner().invoke(app, ["score", str(SAMPLES / "consent-overlay-off"), str(SAMPLES / "consent-overlay-on"),
                                   "--out", str(tmp_path / "L"), "--quiet", "--format", "json"])
    rows = {r["run_id"]: r for r in json.loads(res.stdout)["runs"]}
    off, on = rows["consent-overlay-off"], rows["consent-overlay-on"]
    assert (off["eval_final_verdict"], off["false_claim"]) == ("fail", True)
    assert (on["eval_final_verdict"], on["false_claim"]) == ("pass", False)
    assert "verdicts: 1 pass, 1 fail; 1 false claim" in res.output


def test_tables_fit_80_columns_and_never_wrap_identifiers(monkeypatch):
    """Issue 15: in an 80-column terminal a run id stays on one line, long headers break after underscores, and
    no line is wider than the terminal. Issue 40: an id is never cut either: one wider than the terminal is
    printed whole on a line of its own (one record per block), which the terminal wraps and a copy keeps."""
    from rich.console import Console

    from trajcheck.cli import common, score

    buf = io.StringIO()
    monkeypatch.setattr(common, "out", Console(width=80, file=buf, color_system=None, soft_wrap=True))
    monkeypatch.setattr(score, "out", common.out)
    rows = [{"run_id": rid, "status": "ok", "n_steps": 7, "effect_checked": 2, "effect_no_effect": 1,
             "effect_no_effect_seed": 1, "warnings": [], "outcome_status": "done"}
            for rid in ("shop-checkout-1080p-jpeg", "nc-register-navigation", "auth-redirect-hidpi")]
    score._render(rows, common.Format.table)
    text = buf.getvalue()
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    for r in rows:
        assert any(r["run_id"] in line for line in lines), r["run_id"]
    buf.seek(0)
    buf.truncate()
    common.emit(["run_id", "eval_final_verdict", "verdict_source", "false_claim"],
                [["x" * 120, "pass", "evaluator", False]], common.Format.table)
    lines = buf.getvalue().splitlines()
    assert [line for line in lines if len(line) > 80] == ["run_id              " + "x" * 120]
    assert "eval_final_verdict  pass" in lines and "…" not in buf.getvalue()
