"""`trajcheck diff`: two runs of one task side by side, on the sample runs recorded in both arms.

Five tasks are recorded with `config.perceptual_verifier` off and on (sample_runs/<name>-off and -on). Read
from their steps.jsonl, each pair starts with the same high-risk action on the same screen, which has no
visible effect; the verifier-on run is warned and recovers, the verifier-off run is not and goes its own way
at step 2:

- consent-overlay (newsletter-subscribe): step 1 both click Subscribe (640, 316) under a cookie banner; step 2
  off declares DONE, on clicks the banner's "accept all" (1072, 699): another action.
- drift-loop (support-message): step 1 both click Send (938, 429); step 2 off clicks Send again (938, 429),
  on clicks the message field (603, 429): the same action type, another target.
- offscreen-modal (delete-account): step 1 both click Delete account (917, 170); step 2 off declares DONE,
  on scrolls down to the confirmation (640, 400).
- terms-checkbox (create-workspace): step 1 both click Submit (413, 308); step 2 off declares DONE, on ticks
  the terms checkbox (380, 261).
- validation-flash (signup): step 1 both click Submit (413, 354); step 2 off declares DONE, on clicks the
  email field (640, 300).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.store import ledger
from trajcheck.cli.main import app
from trajcheck.scoring.pipeline import score_paths

from conftest import SAMPLES, copy_run, run_json

runner = CliRunner()
BY = "config.perceptual_verifier"

#: task -> (sample run pair, reason, A's action at step 2, B's action at step 2), each from the runs' steps.jsonl
DIVERGENCES = {
    "newsletter-subscribe": ("consent-overlay", "different_action", "DONE", "CLICK (1072, 699)"),
    "support-message": ("drift-loop", "different_target", "CLICK (938, 429)", "CLICK (603, 429)"),
    "delete-account": ("offscreen-modal", "different_action", "DONE", "SCROLL (640, 400)"),
    "create-workspace": ("terms-checkbox", "different_action", "DONE", "CLICK (380, 261)"),
    "signup": ("validation-flash", "different_action", "DONE", "CLICK (640, 300)"),
}


def _recorded(run: str, index: int) -> dict[str, object]:
    """The action of step ``index`` as the run recorded it (not as the ledger holds it)."""
    for line in (SAMPLES / run / "steps.jsonl").read_text().splitlines():
        step = json.loads(line)
        if step["index"] == index:
            return dict(step["action"])
    raise AssertionError(f"{run} has no step {index}")


@pytest.mark.parametrize("task", sorted(DIVERGENCES))
def test_diff_names_the_first_divergent_step_of_each_sample_pair(sample_ledger, task):
    name, reason, action_a, action_b = DIVERGENCES[task]
    d = trajcheck.diff(sample_ledger, task=task, by=BY).to_json()
    # A is the first arm by name (false: verifier off), as compare takes it
    assert (d["a"]["run_id"], d["a"]["arm"], d["b"]["run_id"], d["b"]["arm"]) == (f"{name}-off", "false",
                                                                                 f"{name}-on", "true")
    first = d["first_divergence"]
    assert (first["pair"], first["step_a"], first["step_b"], first["reason"]) == (2, 2, 2, reason)
    assert first["why"] == f"A step 2: {action_a}; B step 2: {action_b}"
    # step 1 is the same action on the same screen in both runs
    one = d["pairs"][0]
    assert (one["match"], one["a"]["step_index"], one["b"]["step_index"]) == ("same", 1, 1)
    assert one["screen_before"] == "same" and _recorded(f"{name}-off", 1) == _recorded(f"{name}-on", 1)
    # and step 2 is where the recorded actions part
    a2, b2 = _recorded(f"{name}-off", 2), _recorded(f"{name}-on", 2)
    assert a2 != b2 and (a2["type"] != b2["type"]) == (reason == "different_action")


def test_the_longer_run_goes_on_after_the_other_ended(sample_ledger):
    d = trajcheck.diff(sample_ledger, "consent-overlay-off", "consent-overlay-on").to_json()
    assert [(p["match"], p["a"] and p["a"]["step_index"], p["b"] and p["b"]["step_index"]) for p in d["pairs"]] == [
        ("same", 1, 1), ("different_action", 2, 2), ("run_ended", None, 3), ("run_ended", None, 4)]
    # the WARNING after the swallowed click: computed for both runs, recorded as shown in the verifier-on run only
    a1, b1 = d["pairs"][0]["a"], d["pairs"][0]["b"]
    assert a1["hint"] == b1["hint"] == b1["shown"] and "WARNING" in a1["hint"] and a1["shown"] is None
    assert d["by"] is None and d["a"]["arm"] is None and d["a"]["picked"] is None


def test_table_marks_the_divergent_pair(sample_ledger, width100):
    res = runner.invoke(app, ["diff", str(sample_ledger), "--task", "support-message", "--by", BY])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("A: drift-loop-off  (config.perceptual_verifier = false)  fail, 5 steps")
    marked = [i for i, line in enumerate(lines) if "◀ first" in line]
    assert len(marked) == 1
    # the row above the mark is pair 2: A clicks Send again, B the message field
    row = lines[marked[0] - 1]
    assert row.startswith("│ 2 │ 2 CLICK (938, 429)") and "≠ target" in row and "2 CLICK (603, 429)" in row
    assert "WARNING hint · shown to the agent" in res.stdout and "WARNING hint · none recorded as shown" in res.stdout
    assert lines[-2:] == ["first divergence at pair 2 (A step 2, B step 2): different_target",
                          "A step 2: CLICK (938, 429); B step 2: CLICK (603, 429)"]


def test_csv_has_one_row_per_pair(sample_ledger):
    res = runner.invoke(app, ["diff", str(sample_ledger), "terms-checkbox-off", "terms-checkbox-on", "-f", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("pair,match,first_divergence,a_step_index,a_action_type,a_action_x,a_action_y,")
    assert [line.split(",")[:7] for line in lines[1:]] == [["1", "same", "False", "1", "CLICK", "413.0", "308.0"],
                                                           ["2", "different_action", "True", "2", "DONE", "", ""],
                                                           ["3", "run_ended", "False", "", "", "", ""],
                                                           ["4", "run_ended", "False", "", "", "", ""]]


@pytest.mark.parametrize("args, code, message", [
    (["consent-overlay-of", "consent-overlay-on"], 2, "no run 'consent-overlay-of' in the ledger; did you mean "
                                                      "consent-overlay-off?"),
    (["consent-overlay-off"], 2, "give two runs (RUN_A RUN_B), or --task and --by"),
    (["--task", "signup"], 2, "give two runs (RUN_A RUN_B), or --task T with --by config.KEY"),
    (["a", "b", "--task", "signup", "--by", BY], 2, "not both"),
    (["--task", "sign", "--by", BY], 2, "no scored run of task 'sign' in the ledger; did you mean signup?"),
    (["--task", "signup", "--by", "config.no_such_key"], 2, "has a value of config.no_such_key: it names no arm"),
    (["--task", "deals-search", "--by", BY], 2, "task 'deals-search' has runs in 1 arm of config.perceptual_verifier "
                                              "(true): a diff needs a run in each of two arms"),
    (["--task", "signup", "--by", BY, "--arm", "maybe"], 2, "--arm maybe: task 'signup' has no run in that arm"),
    (["--task", "signup", "--by", BY, "--baseline", "true", "--arm", "true"], 2, "the same arm (true)"),
    (["--task", "signup", "--by", BY, "--pick", "worst"], 2, "--pick worst: give first, best or a trial number"),
    (["--task", "signup", "--by", "no such column"], 2, "--by no such column: not a column name"),
])
def test_bad_requests_exit_2_with_a_message(sample_ledger, args, code, message):
    res = runner.invoke(app, ["diff", str(sample_ledger), *args])
    assert res.exit_code == code, res.output
    assert message in " ".join(res.stderr.split()), res.stderr


def test_an_unreadable_ledger_exits_3(tmp_path):
    res = runner.invoke(app, ["diff", str(tmp_path / "nowhere"), "a", "b"])
    assert res.exit_code == 3 and "no such ledger directory" in res.stderr


@pytest.fixture(scope="module")
def trials_ledger(tmp_path_factory) -> Path:
    """newsletter-subscribe four times: the verifier-off run as trials 0 and 2 of the off arm; the verifier-on
    run as trial 1 and the verifier-off run (its config set on) as trial 2 of the on arm."""
    root = tmp_path_factory.mktemp("trials")
    for run_id, source, trial, on in (("off-t0", "consent-overlay-off", 0, False),
                                      ("off-t2", "consent-overlay-off", 2, False),
                                      ("on-t1", "consent-overlay-on", 1, True),
                                      ("on-t2", "consent-overlay-off", 2, True)):
        d = copy_run(SAMPLES / source, root / "runs" / run_id)
        meta = json.loads((d / "run.json").read_text())
        meta.update(run_id=run_id, trial=trial, config={"perceptual_verifier": on})
        (d / "run.json").write_text(json.dumps(meta))
    rep = score_paths([root / "runs"], jobs=1)
    ledger.write(root / "L", [r.run for r in rep.results], [s for r in rep.results for s in r.steps])
    return root / "L"


def test_pick_first_is_the_pair_compare_makes(trials_ledger):
    d = run_json("diff", str(trials_ledger), "--task", "newsletter-subscribe", "--by", BY)
    assert (d["a"]["run_id"], d["b"]["run_id"], d["pick"]) == ("off-t2", "on-t2", "first")
    assert d["a"]["picked"] == d["b"]["picked"] == ("the pair compare makes: trial 2, the lowest both arms ran, "
                                                    "first by run_id (of 2 runs)")
    # the same recorded run in both arms: nothing diverges
    assert d["first_divergence"] is None and {p["match"] for p in d["pairs"]} == {"same"}


def test_pick_best_and_a_trial(trials_ledger):
    best = trajcheck.diff(trials_ledger, task="newsletter-subscribe", by=BY, pick="best").to_json()
    # off: two failing copies, equal in reward and steps, so run_id decides; on: the passing run wins
    assert (best["a"]["run_id"], best["b"]["run_id"]) == ("off-t0", "on-t1")
    assert best["b"]["verdict"] == "pass" and best["first_divergence"]["reason"] == "different_action"
    flipped = trajcheck.diff(trials_ledger, task="newsletter-subscribe", by=BY, pick=2, baseline="true").to_json()
    assert (flipped["a"]["run_id"], flipped["b"]["run_id"]) == ("on-t2", "off-t2")
    res = runner.invoke(app, ["diff", str(trials_ledger), "--task", "newsletter-subscribe", "--by", BY, "--pick", "1"])
    assert res.exit_code == 2 and "arm false has no run of task 'newsletter-subscribe' with that trial; its " \
                                  "trials: 0, 2" in " ".join(res.stderr.split())
