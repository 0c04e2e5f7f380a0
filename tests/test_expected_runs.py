"""A denominator that never shrinks in silence (issue 50, item 3): `score --expect` records the runs a benchmark
should have; the summary names the missing tasks, `export` and `compare` count them as the options say (by default, rates over the expected runs), and `redo`
lists the runs to run again.

Three sample runs are scored (terms-checkbox-off fails, terms-checkbox-on passes: create-workspace twice;
captcha-blocked fails: deals-search) against a tasks file that also expects ghost-a once and ghost-b twice: 6
expected runs, 3 scored, 3 missing. The rates are Wilson's intervals from the closed form.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import SAMPLES, run_json

Z = 1.959963984540054
TASKS = "# the benchmark\ncreate-workspace x 2\ndeals-search\nghost-a   # never run\nghost-b × 2\n"
RUNS = ["terms-checkbox-off", "terms-checkbox-on", "captcha-blocked"]
runner = CliRunner()


def rate(k: int, n: int) -> dict[str, Any]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return {"k": k, "n": n, "rate": round(p, 6), "low": round(max(0.0, centre - half), 6),
            "high": round(min(1.0, centre + half), 6)}


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("expected")
    (root / "tasks.txt").write_text(TASKS, "utf-8")
    res = runner.invoke(app, ["score", *[str(SAMPLES / r) for r in RUNS], "--out", str(root / "L"), "-q",
                              "--expect", str(root / "tasks.txt")])
    assert res.exit_code == 0, res.output
    return root / "L", res


def test_score_expect_names_the_missing_tasks(scored: tuple[Path, Any]) -> None:
    path, res = scored
    assert res.stderr.splitlines()[-1] == "scored 3 of 6 expected runs; 0 damaged; 3 missing: ghost-a, ghost-b x2"
    assert json.loads((path / "expected.json").read_text()) == {
        "format": "trajcheck.expected/1", "tasks": {"create-workspace": 2, "deals-search": 1, "ghost-a": 1,
                                                    "ghost-b": 2}}
    # scoring again without --expect keeps the table, and the summary still says it
    again = runner.invoke(app, ["score", str(SAMPLES / RUNS[0]), "--out", str(path), "-q", "--format", "json"])
    assert json.loads(again.stdout)["expected"] == [{
        "group": "(all)", "expected": 6, "scored": 3, "damaged": 0, "invalid": 0, "missing": 3,
        "missing_tasks": {"ghost-a": 1, "ghost-b": 2}, "unexpected": 0,
        "text": "scored 3 of 6 expected runs; 0 damaged; 3 missing: ghost-a, ghost-b x2"}]


@pytest.mark.slow
def test_export_counts_the_missing_runs_as_the_option_says(scored: tuple[Path, Any]) -> None:
    path, _ = scored
    table = json.loads(runner.invoke(app, ["export", str(path), "--format", "json"]).stdout)
    [row] = table["rows"]
    # default: over the 6 expected runs, each missing run a failure (1 of 6), and the caption says so
    assert (row["success"], row["expected"], row["missing"], row["damaged"]) == (rate(1, 6), 6, 3, 0)
    assert ("3 missing: ghost-a, ghost-b x2; rates over the expected runs: missing and unreadable runs counted as "
            "failures (--missing skip leaves them out)") in table["caption"]
    assert json.loads(runner.invoke(app, ["export", str(path), "--format", "json", "--missing", "fail"]).stdout
                      ) == table  # the default, named
    skip = json.loads(runner.invoke(app, ["export", str(path), "--format", "json", "--missing", "skip"]).stdout)
    [row] = skip["rows"]
    assert row["success"] == rate(1, 3)  # over the 3 runs scored, the missing ones named but not counted
    assert "rates over the scored runs: missing and unreadable runs not counted" in skip["caption"]
    md = runner.invoke(app, ["export", str(path)]).stdout
    assert "rates over the expected runs: missing and unreadable runs counted as failures" in md
    # compare: each arm is expected to run every task; success over the runs the options say
    got = run_json("compare", str(path), "--by", "config.perceptual_verifier")
    assert [(a["arm"], a["success"]) for a in got["arms"]] == [("false", rate(0, 6)), ("true", rate(1, 6))]
    assert got["rates_over"].startswith("rates over the expected runs")
    table = runner.invoke(app, ["compare", str(path), "--by", "config.perceptual_verifier"], env={"COLUMNS": "200"})
    assert table.stdout.startswith("arms, unpaired: rates over the expected runs: missing and unreadable runs "
                                   "counted as failures")
    skipped = run_json("compare", str(path), "--by", "config.perceptual_verifier", "--missing", "skip")
    assert [(a["arm"], a["success"]) for a in skipped["arms"]] == [("false", rate(0, 1)), ("true", rate(1, 2))]
    assert [(d["group"], d["scored"], d["missing"], d["missing_tasks"]) for d in got["expected"]] == [
        ("false", 1, 5, {"create-workspace": 1, "deals-search": 1, "ghost-a": 1, "ghost-b": 2}),
        ("true", 2, 4, {"create-workspace": 1, "ghost-a": 1, "ghost-b": 2})]


def test_redo_lists_the_missing_runs(scored: tuple[Path, Any], tmp_path: Path) -> None:
    path, _ = scored
    res = runner.invoke(app, ["redo", str(path)])
    assert res.exit_code == 0 and res.stdout == "ghost-a\nghost-b\nghost-b\n"
    assert run_json("redo", str(path)) == {"expected": True, "runs": [
        {"task_id": "ghost-a", "run_id": None, "why": "missing"},
        {"task_id": "ghost-b", "run_id": None, "why": "missing"},
        {"task_id": "ghost-b", "run_id": None, "why": "missing"}]}


def test_a_bad_tasks_file_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "tasks.txt").write_text("task-a x 0\n")
    res = runner.invoke(app, ["score", str(SAMPLES / RUNS[0]), "--out", str(tmp_path / "L"), "-q",
                              "--expect", str(tmp_path / "tasks.txt")])
    assert res.exit_code == 2 and "tasks.txt:1: expected a task id" in res.stderr
    assert not (tmp_path / "L").exists()


@pytest.mark.slow
def test_a_folder_of_plots_is_no_run_and_a_run_without_a_log_is_counted_apart(tmp_path: Path) -> None:
    """Beside two runs of support-message (expected 3 times), a folder with a screenshot-sized plot is no run: the
    third run is missing. A run folder that lost its log is counted apart, never taken for the missing run: nothing
    says which task it ran (issue 50 review, item 2)."""
    import shutil

    from PIL import Image

    exp = tmp_path / "exp2"
    for name in ("drift-loop-off", "drift-loop-on"):
        shutil.copytree(SAMPLES / name, exp / name)
    (exp / "plots").mkdir()
    Image.new("RGB", (1280, 800), "white").save(exp / "plots" / "success_rate.png")
    (tmp_path / "tasks.txt").write_text("support-message x 3\n")
    res = runner.invoke(app, ["score", str(exp), "--out", str(tmp_path / "L"), "-q",
                              "--expect", str(tmp_path / "tasks.txt")])
    assert "plots: 1 image in plots, but no reader" in res.stderr  # named as a folder no reader claims
    assert res.stderr.splitlines()[-1] == "scored 2 of 3 expected runs; 0 damaged; 1 missing: support-message"

    lost = shutil.copytree(SAMPLES / "drift-loop-on", exp / "lost")
    (lost / "run.json").unlink()
    (lost / "steps.jsonl").unlink()
    (exp / ".trajcheckignore").write_text("plots\n")
    got = run_json("score", str(exp), "--out", str(tmp_path / "L2"), "-q", "--expect", str(tmp_path / "tasks.txt"))
    [d] = got["expected"]
    assert (d["scored"], d["damaged"], d["missing"], d["unknown_task"]) == (2, 0, 1, 1)
    assert d["text"] == ("scored 2 of 3 expected runs; 0 damaged; 1 missing: support-message; 1 run without a log "
                         "(task unknown)")
    assert run_json("redo", str(tmp_path / "L2"))["runs"] == [
        {"task_id": "support-message", "run_id": None, "why": "missing"},
        {"task_id": None, "run_id": "lost", "why": "damaged: no_log"}]


@pytest.mark.slow
def test_a_run_without_a_log_is_no_arm_of_its_own_and_is_said_once(tmp_path: Path) -> None:
    """compare --by: a run without a log has no config, so no value of the key; no denominator is built for it as
    if it were an arm (it was '(null): scored 0 of 3 expected runs; 3 missing'), each arm counts its own, and the
    run is said once, apart (issue 50 review, item 4)."""
    import shutil

    exp = tmp_path / "exp"
    for name in ("drift-loop-off", "drift-loop-on"):
        shutil.copytree(SAMPLES / name, exp / name)
    lost = shutil.copytree(SAMPLES / "drift-loop-on", exp / "lost")
    (lost / "run.json").unlink()
    (lost / "steps.jsonl").unlink()
    (tmp_path / "tasks.txt").write_text("support-message x 2\nghost\n")
    run_json("score", str(exp), "--out", str(tmp_path / "L"), "-q", "--expect", str(tmp_path / "tasks.txt"))
    got = run_json("compare", str(tmp_path / "L"), "--by", "config.perceptual_verifier")
    assert [(d["group"], d["scored"], d["missing"]) for d in got["expected"]] == [("false", 1, 2), ("true", 1, 2)]
    assert got["runs_without_log"] == 1
    assert [(a["arm"], a["success"]) for a in got["arms"]] == [("false", rate(0, 3)), ("true", rate(1, 3))]
    res = runner.invoke(app, ["compare", str(tmp_path / "L"), "--by", "config.perceptual_verifier"])
    said = "1 run without a log (task unknown, no value of config.perceptual_verifier): in no arm's expected runs"
    assert res.exit_code == 0 and res.stderr.count(said) == 1 and "(null):" not in res.stderr
    table = json.loads(runner.invoke(app, ["export", str(tmp_path / "L"), "--by", "config.perceptual_verifier",
                                           "--format", "json"]).stdout)
    assert table["caption"].count(said) == 1 and "(null):" not in table["caption"]
