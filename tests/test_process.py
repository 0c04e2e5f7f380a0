"""The process score (issue 51, item 2): effective actions, progress and recovery after warnings, with the steps
spent on an uncontrollable block counting neither way, beside the outcome."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.analyzers.process import WEIGHTS, ProcessStep, assess

from conftest import copy_run, read_steps, write_steps

GOAL = "Find today's deals on the shop and report the cheapest one."


def _click(i: int, effect: bool | None, state: int | None, kind: str | None, **kw: Any) -> ProcessStep:
    return ProcessStep(index=i, action_type="CLICK", high_risk=True, effect=effect, changed=effect, state=state,
                       state_kind=kind, **kw)


def _done(i: int, state: int) -> ProcessStep:
    return ProcessStep(index=i, action_type="DONE", changed=False, state=state, state_kind="same")


def test_the_score_pools_the_judged_steps_each_weighted_as_the_reward_swings():
    steps = [_click(1, True, 1, "new"), _click(2, False, 1, "same", followup="recovered"),
             _click(3, True, 2, "new"), _click(4, True, 1, "return"), _done(5, 1)]
    p = assess(steps, GOAL)
    assert p.parts == {"effective": (3.0, 4), "progress": (2.0, 3), "recovery": (1.0, 1)}
    # the weights are the evidence reward's swings: page_changed +0.4 against no_observed_effect -0.4, against a
    # return (capped at 0), fresh_read_after_failure +0.5 against repeated_failed_action -0.7
    assert WEIGHTS == {"effective": 0.8, "progress": 0.4, "recovery": 1.2}
    # each judged step weighs its part's weight: sum(w * k) / sum(w * n)
    want = (0.8 * 3 + 0.4 * 2 + 1.2 * 1) / (0.8 * 4 + 0.4 * 3 + 1.2 * 1)
    assert p.score == pytest.approx(want, abs=1e-4)
    ev = json.loads(p.evidence())
    assert ev["effective"] == {"k": 3, "n": 4} and ev["recovery"]["recovered"] == 1 and "blocked" not in ev


def test_recovery_after_a_warning_raises_the_score_and_repeating_the_dead_action_lowers_it():
    def run(followup: str, retry_works: bool) -> float | None:
        return assess([_click(1, True, 1, "new"), _click(2, False, 1, "same", followup=followup),
                       _click(3, retry_works, 2 if retry_works else 1, "new" if retry_works else "same"),
                       _done(4, 2 if retry_works else 1)], GOAL).score

    recovered, moved_on, repeated = run("recovered", True), run("moved_on", False), run("repeated", False)
    assert recovered is not None and moved_on is not None and repeated is not None
    assert recovered > moved_on > repeated
    # a false warning (the step in fact had a visible effect) is no warning to recover from, and the step counts
    # as effective
    false = assess([_click(1, False, 1, "new", followup="declared_done", in_fact=True), _done(2, 1)], GOAL)
    assert false.parts["recovery"] == (0.0, 0) and false.parts["effective"] == (1.0, 1)


def test_a_failed_action_then_a_fresh_read_recovers_and_repeating_it_does_not():
    # the seed's own case: after a stale reference, a fresh read outranks repeating the failed action
    read = ProcessStep(index=2, action_type="READ", codes=("fresh_read_after_failure",))
    again = ProcessStep(index=2, action_type="CLICK", changed=False, codes=("repeated_failed_action",))
    first = ProcessStep(index=1, action_type="CLICK", changed=False, state=0, state_kind="same")
    a, b = assess([first, read], GOAL), assess([first, again], GOAL)
    assert a.parts["recovery"] == (1.0, 1) and b.parts["recovery"] == (0.0, 1)
    assert a.score is not None and b.score is not None and a.score > b.score


def test_an_uncontrollable_block_counts_neither_way():
    before = [_click(1, True, 1, "new"), _click(2, False, 1, "same", followup="moved_on")]
    captcha = [ProcessStep(index=3, action_type="NAVIGATE", changed=True, state=2, state_kind="new",
                           codes=("captcha",)),
               _click(4, False, 2, "same", followup="repeated"), _click(5, False, 2, "same", followup="repeated"),
               ProcessStep(index=6, action_type="WAIT", changed=False, state=2, state_kind="same")]
    alone, blocked = assess(before, GOAL), assess(before + captcha, GOAL)
    assert blocked.blocked == (3, 4, 5, 6) and blocked.blocked_by == "captcha"
    assert blocked.parts == alone.parts and blocked.score == alone.score  # neither numerator nor denominator
    assert json.loads(blocked.evidence())["blocked"] == {"steps": 4, "from": 3, "by": "captcha"}
    # leaving the wall ends the block: the step that reaches another screen is the agent's again
    away = captcha + [_click(7, True, 3, "new")]
    assert assess(before + away, GOAL).blocked == (3, 4, 5, 6)


def test_a_block_the_agent_could_have_passed_counts_against_it():
    wall = [_click(1, True, 1, "new", codes=("auth_redirect",)), _click(2, False, 1, "same", followup="repeated")]
    no_way_in = assess(wall, GOAL)
    assert no_way_in.blocked == (1, 2) and no_way_in.score is None
    given = assess(wall, GOAL + " Log in as jdoe, password hunter2.")
    assert given.blocked == () and given.parts["recovery"] == (0.0, 1)
    assert assess(wall, None).blocked == (1, 2)  # no goal recorded: the evidence does not say, so neither way


def test_an_outage_or_out_of_stock_message_is_a_block_and_a_validation_message_is_not():
    for text in ("New message appeared: 503 Service Unavailable", "error: Sorry, this item is out of stock (0.91)"):
        p = assess([_click(1, True, 1, "new", messages=(text,)), _click(2, False, 1, "same", followup="repeated")],
                   GOAL)
        assert p.blocked == (1, 2) and p.score is None, text
    p = assess([_click(1, True, 1, "new", messages=("New message appeared: Password is too short",)),
                _click(2, False, 1, "same", followup="repeated")], GOAL)
    assert p.blocked == () and p.score is not None


def test_a_run_with_no_step_that_can_be_judged_has_no_score():
    assert assess([], GOAL).score is None
    # waits, reads and a DONE without frames: nothing acted, nothing moved
    idle = [ProcessStep(index=1, action_type="WAIT"), ProcessStep(index=2, action_type="READ"),
            ProcessStep(index=3, action_type="DONE")]
    p = assess(idle, GOAL)
    assert p.score is None and p.parts == {"effective": (0.0, 0), "progress": (0.0, 0), "recovery": (0.0, 0)}
    # a high-risk click without frames has no verdict: missing evidence is not failure
    assert assess([_click(1, None, None, None)], GOAL).score is None


def test_what_a_run_reached_after_it_stalled_is_not_progress():
    steps = [_click(1, True, 1, "new"), _click(2, True, 2, "new"), _click(3, True, 1, "return"),
             _click(4, True, 3, "new"), _click(5, True, 1, "return")]
    assert assess(steps, GOAL).parts["progress"] == (3.0, 5)
    assert assess(steps, GOAL, stalled_from=2).parts["progress"] == (1.0, 5)


# on the sample runs


def _runs(ledger: Path) -> dict[str, dict[str, Any]]:
    from trajcheck.store import ledger as store

    con = store.connect(ledger)
    try:
        cur = con.execute("select run_id, process_score, process_evidence, decisive_control, failure_mode "
                          "from runs")
        return {r[0]: dict(zip(("run_id", "score", "evidence", "decisive_control", "mode"), r))
                for r in cur.fetchall()}
    finally:
        con.close()


def test_sample_runs_that_pass_with_every_labelled_step_effective_outscore_the_dead_action_runs(sample_ledger,
                                                                                                 labels):
    runs = _runs(sample_ledger)

    def effects(rid: str) -> list[bool]:
        return [s["effect"] for s in labels[rid]["steps"].values() if s["effect"] is not None]

    clean = [r for r, lab in labels.items() if lab["outcome"] == "pass" and effects(r) and all(effects(r))]
    dead = [r for r, lab in labels.items() if lab["outcome"] == "fail" and effects(r) and not any(effects(r))]
    assert len(clean) >= 5 and len(dead) >= 5, (clean, dead)
    low_clean = min(runs[r]["score"] for r in clean)
    high_dead = max(runs[r]["score"] for r in dead)
    assert low_clean > high_dead, {r: runs[r]["score"] for r in clean + dead}
    # a passing run that recovered after a warning outscores its arm twin that declared done on the dead click
    for twin in ("consent-overlay", "terms-checkbox", "validation-flash", "drift-loop", "offscreen-modal"):
        assert runs[f"{twin}-on"]["score"] > runs[f"{twin}-off"]["score"], twin


def test_the_blocked_sample_runs_count_their_uncontrollable_block_neither_way(sample_ledger):
    runs = _runs(sample_ledger)
    for rid in ("captcha-blocked", "nc-signin-gave-up"):
        r = runs[rid]
        assert r["decisive_control"] == "uncontrollable"
        ev = json.loads(r["evidence"])
        assert ev["blocked"]["from"] == 1 and r["score"] is None, r  # every step was on the wall: no score
    overlay = runs["consent-overlay-off"]  # an overlay the agent could have dismissed: its dead click counts
    assert overlay["decisive_control"] == "controllable" and overlay["score"] == 0.0
    assert "blocked" not in json.loads(overlay["evidence"])


def test_a_harness_failure_leaves_the_step_it_ended_on(tmp_path, samples):
    from trajcheck.scoring.pipeline import score_paths

    run = copy_run(samples / "drift-loop-off", tmp_path / "drift-loop-off")
    steps = read_steps(run)
    steps[-1]["executor"] = {"ok": False, "error": "APIConnectionError: connection reset by peer"}
    write_steps(run, steps)
    row = score_paths([run], jobs=1).results[0].run
    assert row["damage"] == "infrastructure"
    ev = json.loads(row["process_evidence"])
    last = steps[-1]["index"]
    assert ev["blocked"] == {"steps": 1, "from": last, "by": "damage: infrastructure"}
    assert ev["effective"]["n"] == len(steps) - 1  # the other dead clicks still count


def test_timeline_and_the_report_say_the_process_score_beside_the_outcome(sample_ledger, tmp_path, width):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    import trajcheck.cli.timeline  # noqa: F401  (imported before its console is replaced, so the fixture undoes it)

    width(200)
    runs = _runs(sample_ledger)
    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "nc-consent-recovered"])
    assert res.exit_code == 0, res.output
    ev = json.loads(runs["nc-consent-recovered"]["evidence"])
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("process"))
    assert f"{runs['nc-consent-recovered']['score']:.2f}: effective actions {ev['effective']['k']}/" \
           f"{ev['effective']['n']}" in line
    assert "recovered 1" in line and "repeated 1" in line
    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "captcha-blocked"])
    assert "process   none (no step could be judged): 3 steps on an uncontrollable block from step 1 (`captcha`)" \
        in res.stdout
    res = CliRunner().invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    index = (tmp_path / "r" / "index.html").read_text()
    assert "<th>process</th>" in index
    row = next(r for r in index.split("<tr ") if r.startswith("data-verdict") and ">drift-loop-on</a>" in r)
    assert f"<td>{runs['drift-loop-on']['score']:.2f}</td>" in row
    page = (tmp_path / "r" / "runs" / "captcha-blocked.html").read_text()
    assert "<b>process score</b> none (no step could be judged)" in page


def test_compare_reports_each_arms_controllable_failures_as_failures_does(sample_ledger, width):
    """compare's controllable failure rate per arm, its difference and the mean process score, against figures
    computed here from the ledger's runs table (and the same rate `failures` gives), in json, csv and the table."""
    import csv
    import io
    import statistics

    from typer.testing import CliRunner

    from trajcheck.base.stats import newcombe_unpaired
    from trajcheck.cli.main import app
    from trajcheck.store import ledger as store

    from conftest import run_json

    by = "config.perceptual_verifier"
    con = store.connect(sample_ledger)
    try:
        rows = con.execute("select json_extract_string(config, '$.perceptual_verifier'), failure_mode, "
                           "failure_control, process_score from runs where status = 'ok' and "
                           "json_extract_string(config, '$.perceptual_verifier') is not null").fetchall()
    finally:
        con.close()
    want: dict[str, dict[str, Any]] = {}
    for arm in ("false", "true"):
        mine = [r for r in rows if r[0] == arm]
        k = sum(1 for r in mine if r[1] is not None and r[2] == "controllable")
        out = sum(1 for r in mine if r[1] is not None and r[2] == "uncontrollable")
        scores = [r[3] for r in mine if r[3] is not None]
        want[arm] = {"k": k, "n": len(mine) - out, "out": out, "mean": statistics.fmean(scores), "scored": len(scores)}
    assert want["false"]["k"] == 5 and want["true"]["out"] == 1  # the sample runs: 5 dead verifier-off runs, a CAPTCHA
    got = run_json("compare", str(sample_ledger), "--by", by, "--baseline", "false")
    arms = {a["arm"]: a for a in got["arms"]}
    for arm, w in want.items():
        a = arms[arm]
        assert (a["controllable_failures"]["k"], a["controllable_failures"]["n"], a["uncontrollable_failures"]) == \
            (w["k"], w["n"], w["out"])
        assert a["process_score"]["mean"] == pytest.approx(w["mean"], abs=1e-6) and a["process_score"]["n"] == \
            w["scored"]
    diff, low, high = newcombe_unpaired(want["false"]["k"], want["false"]["n"], want["true"]["k"], want["true"]["n"])
    assert arms["false"]["controllable_vs_baseline"] is None
    assert arms["true"]["controllable_vs_baseline"] == {"difference": round(diff, 6), "low": round(low, 6),
                                                        "high": round(high, 6), "method": "newcombe_unpaired"}
    assert diff == pytest.approx(want["true"]["k"] / want["true"]["n"] - 1.0)
    assert arms["true"]["process_vs_baseline"] == pytest.approx(want["true"]["mean"] - want["false"]["mean"], abs=1e-5)
    # the same rate as `failures` (one implementation: queries.failuremodes.control_rate)
    fails = {a["arm"]: a for a in run_json("failures", str(sample_ledger), "--by", by)["arms"]}
    for arm in want:
        assert fails[arm]["controllable"] == arms[arm]["controllable_failures"]
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), "--by", by, "--baseline", "false", "--format", "csv"])
    table = {r["arm"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert table["true"]["controllable_failures_k"] == str(want["true"]["k"])
    assert table["true"]["controllable_failures_n"] == str(want["true"]["n"])
    assert float(table["true"]["controllable_vs_baseline_difference"]) == pytest.approx(diff, abs=1e-6)
    import trajcheck.cli.compare  # noqa: F401  (imported before its console is replaced, so the fixture undoes it)

    width(200)
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), "--by", by, "--baseline", "false"])
    line = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("controllable_failures"))
    t = want["true"]
    assert f"({t['k']}/{t['n']})" in line and f"({want['false']['k']}/{want['false']['n']})" in line


def test_the_documented_weights_are_the_analyzers():
    from conftest import ROOT

    doc = (ROOT / "docs" / "failures.md").read_text()
    table = doc[doc.index("| part | good | bad | weight |"):]
    table = table[:table.index("\n\n")]
    for part, w in WEIGHTS.items():
        rows = [ln for ln in table.splitlines() if ln.startswith(f"| {part} |")]
        assert len(rows) == 1 and rows[0].endswith(f"| {w:g} |"), (part, rows)
