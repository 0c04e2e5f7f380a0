"""Issue 29: progress that is real. The reward follows the states a run reaches (analyzers/progress.py), on two
runs recorded in Chromium: menus opened and closed again and again, then DONE (no progress at all), and a walk
through six look-alike pages of a list to the order it looked for (progress all the way)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajcheck.store import ledger
from trajcheck.analyzers.progress import apply, no_net_progress
from trajcheck.analyzers.reward import Reward
from trajcheck.analyzers.states import RunStates, StepState
from trajcheck.scoring.pipeline import ScoreOptions, score_paths

from conftest import SAMPLES

AIMLESS, PAGED = "menu-toggle-aimless", "paged-results-progress"


def _score(*runs: Path, tmp: Path) -> tuple[dict, dict]:
    out = tmp / "L"
    report = score_paths(list(runs), ScoreOptions(), jobs=1)
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    con = ledger.connect(out)
    cur = con.execute("select * from runs")
    cols = [d[0] for d in cur.description]
    by_run = {r[cols.index("run_id")]: dict(zip(cols, r)) for r in cur.fetchall()}
    cur = con.execute("select * from steps order by run_id, step_index")
    cols = [d[0] for d in cur.description]
    steps: dict[str, list[dict]] = {}
    for r in cur.fetchall():
        d = dict(zip(cols, r))
        steps.setdefault(d["run_id"], []).append(d)
    return by_run, steps


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    return _score(SAMPLES / AIMLESS, SAMPLES / PAGED, tmp=tmp_path_factory.mktemp("progress"))


def test_menus_toggled_again_and_again_are_no_progress(scored):
    runs, steps = scored
    r, s = runs[AIMLESS], steps[AIMLESS]
    assert r["reward_total"] <= 0
    assert r["no_net_progress"] is True and r["oscillations"] >= 1
    assert r["stalled_from_step"] == 2  # the first toggle: the dialog closed at step 1 is where it ends
    assert (r["eval_final_verdict"], r["false_claim"], r["false_claim_basis"]) == ("fail", True, "evidence")
    assert any(x.startswith("no_net_progress@2") for x in r["evidence_reasons"])
    closes = [x for x in s if x["state_kind"] == "return"]
    assert len(closes) == 5 and {x["state_returns_to"] for x in closes} == {1}
    assert all(x["reward_score"] <= 0 and any(c.startswith("state_return: back to the screen after step 1")
                                              for c in x["reward_reasons"]) for x in closes)
    assert s[-1]["action_type"] == "DONE" and s[-1]["reward_score"] < 0


def test_look_alike_pages_with_their_own_urls_are_progress(scored):
    runs, steps = scored
    r, s = runs[PAGED], steps[PAGED]
    assert [x["state_kind"] for x in s[:6]] == ["new"] * 6
    assert (r["states_returning"], r["oscillations"], r["stalled_from_step"], r["no_net_progress"]) == (0.0, 0, None,
                                                                                                         False)
    assert not any("state_return" in c or "no_net_progress" in c for x in s for c in x["reward_reasons"])
    assert r["reward_total"] == pytest.approx(3.95) and r["eval_final_verdict"] == "pass"


def _without_dom(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    shutil.rmtree(dst / "dom", ignore_errors=True)
    lines = []
    for line in (dst / "steps.jsonl").read_text().splitlines():
        d = json.loads(line)
        for k in ("dom_before", "dom_after"):
            (d.get("page") or {}).pop(k, None)
        lines.append(json.dumps(d))
    (dst / "steps.jsonl").write_text("\n".join(lines) + "\n")
    return dst


@pytest.mark.slow
def test_the_screen_alone_shows_the_aimless_run_too(tmp_path):
    """Desktop runs record no DOM: the menus toggled are told apart, and gone back to, by their frames alone."""
    run = _without_dom(SAMPLES / AIMLESS, tmp_path / "runs" / AIMLESS)
    runs, _ = _score(run, tmp=tmp_path)
    r = runs[AIMLESS]
    assert r["reward_total"] <= 0 and r["no_net_progress"] is True and r["false_claim"] is True


def _reward(score: float, *reasons: str) -> Reward:
    from trajcheck.analyzers.reward import klass_of

    return Reward(score, klass_of(score), reasons or ("no_signal",), 0.8)


def test_a_return_keeps_its_negative_reward_and_loses_a_positive_one():
    steps = [StepState(0, "new"), StepState(1, "return", 1, True), StepState(1, "return", 1, True)]
    run = RunStates(2, 2, 0.6667, 0, None, 1)
    out = apply([_reward(0.4, "page_changed"), _reward(0.4, "page_changed"), _reward(-0.6, "drift_loop: x")], steps,
                [1, 2, 3], run, False, [None] * 3, ["CLICK"] * 3)
    assert [r.score for r in out] == [0.4, 0.0, -0.6]
    assert out[1].klass == "neutral" and out[1].reasons[-1] == "state_return: back to the screen before step 1"
    hard = Reward(-1.0, "hard_negative", ("unconfirmed_destructive_action: x",), 0.9)
    assert apply([hard], [StepState(1, "return", 1)], [1], run, False, [None], ["CLICK"]) == [hard]


def test_no_net_progress_needs_an_early_screen_and_no_effect_since():
    run = RunStates(3, 2, 0.5, 1, stalled_from=2, final_first_step=1)
    assert no_net_progress([1, 2, 3, 4], run, [None, None, None, None])
    assert not no_net_progress([1, 2, 3, 4], run, [None, None, True, None])  # a submit that did something
    late = RunStates(3, 1, 0.25, 0, stalled_from=4, final_first_step=3)
    assert not no_net_progress([1, 2, 3, 4], late, [None] * 4)  # the screen it ends on was reached late
    assert not no_net_progress([1, 2], RunStates(2, 0, 0.0, 0, None, 2), [None, None])


def test_a_done_whose_answer_matches_keeps_its_reward():
    steps = [StepState(0, "new"), StepState(1, "new"), StepState(0, "return", 1), StepState(0, "same")]
    run = RunStates(2, 1, 0.25, 0, stalled_from=2, final_first_step=1)
    out = apply([_reward(0.4), _reward(0.4), _reward(0.4), _reward(0.9, "expected_data_extracted")], steps,
                [1, 2, 3, 4], run, True, [None, None, None, True], ["CLICK", "CLICK", "CLICK", "DONE"])
    assert [r.score for r in out] == [0.4, 0.0, 0.0, 0.9]


@pytest.mark.slow
def test_efficiency_against_the_reference_step_count(scored, tmp_path):
    """The paged run's contract gives the shortest way, six actions: the run took six (its DONE not counted).
    A run's own reference_steps wins over its contract's; without either there is no efficiency."""
    runs, _ = scored
    assert (runs[PAGED]["reference_steps"], runs[PAGED]["efficiency"]) == (6, 1.0)
    assert (runs[AIMLESS]["reference_steps"], runs[AIMLESS]["efficiency"]) == (None, None)
    run = tmp_path / "runs" / "paged-own-reference"
    shutil.copytree(SAMPLES / PAGED, run)
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "run_id": run.name, "reference_steps": 3}))
    got, _ = _score(run, tmp=tmp_path)
    assert (got[run.name]["reference_steps"], got[run.name]["efficiency"]) == (3, 0.5)


def test_compare_and_export_show_progress_per_arm(sample_ledger):
    from trajcheck.commands import compare, export_table

    arms = {a["arm"]: a for a in compare([sample_ledger], by="config.perceptual_verifier",
                                         include_missing=True).to_json()["arms"]}
    # the runs without a value hold menu-toggle-aimless (5 of its 12 steps go back; stalled from step 2)
    assert arms["(null)"]["mean_stalled_from_step"] == 2.0 and arms["(null)"]["no_net_progress"]["k"] == 1
    assert arms["(null)"]["steps_returning"] == round(round(5 / 12, 4) / 9, 6)  # the column keeps 4 places
    assert arms["true"]["no_net_progress"]["k"] == 0 and arms["true"]["mean_stalled_from_step"] is None
    table = json.loads(export_table(sample_ledger, "summary", "json", by="config.perceptual_verifier"))
    rows = table["rows"]  # records of plain values, the group under its column's name
    true = next(r for r in rows if r["config_perceptual_verifier"] == "true")
    assert true["efficiency"] == 1.0  # the one passing run with a reference: paged-results-progress
    assert next(r for r in rows if r["config_perceptual_verifier"] == "(null)")["stalled_from"] == 2.0


@pytest.mark.slow
def test_timeline_and_report_show_the_states(sample_ledger, tmp_path):
    import io
    import re

    import trajcheck
    from trajcheck.cli.timeline import render
    from rich.console import Console

    data = trajcheck.timeline(sample_ledger, AIMLESS)
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(render(data))
    text = console.export_text()
    assert "BACK to state 1, first seen at step 1 (oscillation 1)" in text
    assert "stalled from step 2  NO NET PROGRESS" in text
    written = trajcheck.report(sample_ledger, tmp_path / "rep", max_runs=0)
    page = next(p.read_text() for p in (tmp_path / "rep" / "runs").glob("*.html") if AIMLESS in p.read_text())
    strip = re.search(r"<div class=states>(.*?)</div>", page)
    assert written.runs == 28 and strip is not None
    assert strip.group(1).count('class="return"') == 5 and "back to the screen of step 1" in strip.group(1)


@pytest.mark.slow
def test_a_tasks_file_gives_reference_step_counts(tmp_path):
    """--tasks FILE: JSON {task_id: N} or CSV task_id,reference_steps; a run's own count, then its contract's,
    come first; a changed file rescores the runs it touches; a bad one is a usage error naming what is wrong."""
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES / AIMLESS, runs / AIMLESS)
    shutil.copytree(SAMPLES / PAGED, runs / PAGED)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps({"quillpad-dark-mode": 3, "find-order-status": {"reference_steps": 2}}))
    out = tmp_path / "L"

    def eff() -> dict:
        return {r[0]: (r[1], r[2]) for r in ledger.query(out, "select task_id, reference_steps, efficiency "
                                                              "from runs").rows}

    res = CliRunner().invoke(app, ["score", str(runs), "--out", str(out), "-q", "--tasks", str(tasks)])
    assert res.exit_code == 0, res.output
    # the aimless run took 11 steps before its DONE; the paged run's contract (6) wins over the file's 2
    assert eff() == {"quillpad-dark-mode": (3, round(3 / 11, 4)), "find-order-status": (6, 1.0)}
    csv_file = tmp_path / "tasks.csv"
    csv_file.write_text("task_id,reference_steps\nquillpad-dark-mode,11\n")
    res = CliRunner().invoke(app, ["score", str(runs), "--out", str(out), "-q", "--tasks", str(csv_file),
                                   "-f", "json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["runs"]) == 2  # other options: both rescored
    assert eff()["quillpad-dark-mode"] == (11, 1.0)
    for text, why in (("task_id,steps\nx,3\n", "needs the columns task_id and reference_steps"),
                      ("task_id,reference_steps\nx,three\n", "line 2: reference_steps must be a whole number")):
        csv_file.write_text(text)
        res = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "M"), "-q", "--tasks",
                                       str(csv_file)])
        assert res.exit_code == 2 and why in " ".join(res.stderr.split()), res.stderr
    assert not (tmp_path / "M").exists()
