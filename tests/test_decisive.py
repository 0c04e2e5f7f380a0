"""The first decisive error (issue 51, item 1): the step after which a run that did not pass could no longer succeed.

The analyzer kind by kind on its inputs (each rule and each of its conditions), then the sample runs: each failing
run's decisive step against what its labelled steps show, and ``timeline`` marking it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from trajcheck.analyzers.decisive import NONE, StepTrace, find
from trajcheck.analyzers.failuremodes import Failure
from trajcheck.base.reasons import DecisiveKind as K
from trajcheck.cli.main import app

from conftest import run_json

runner = CliRunner()


def _runs(ledger: Any) -> dict[str, dict[str, Any]]:
    rows = run_json("query", str(ledger), "select run_id, failure_mode, failure_control, decisive_step, decisive_kind, "
                    "decisive_evidence, decisive_control from runs")
    return {r["run_id"]: r for r in rows}
FAILED = Failure("dead_action", "CLICK", 2, "CLICK changed nothing")


def t(i: int, a: str = "CLICK", **kw: Any) -> StepTrace:
    base: dict[str, Any] = {"state_kind": "same", "changed": False, "frame_pre": f"f{i}.png",
                            "frame_post": f"f{i + 1}.png"}
    base.update(kw)
    return StepTrace(i, a, **base)


def test_a_run_without_a_failure_mode_has_no_decisive_error():
    assert find([t(1, high_risk=True, effect=False)], Failure(), None) == NONE


# ---- dead_action ------------------------------------------------------------------------------------------


def test_the_first_dead_high_risk_action_nothing_recovered_is_decisive_with_its_frames():
    steps = [t(1, state_kind="new", changed=True), t(2, high_risk=True, effect=False),
             t(3, high_risk=True, effect=False), t(4, "DONE")]
    d = find(steps, FAILED, None)
    assert (d.step, d.kind) == (2, K.DEAD_ACTION)
    assert "before f2.png, after f3.png" in (d.evidence or "")


def test_a_dead_action_recovered_by_a_later_effect_or_a_new_screen_is_not_decisive():
    recovered = [t(1, high_risk=True, effect=False), t(2, high_risk=True, effect=True, state_kind="new"),
                 t(3, high_risk=True, effect=False), t(4, "DONE")]
    assert find(recovered, FAILED, None).step == 3  # the later dead action, after the recovery
    moved_on = [t(1, high_risk=True, effect=False), t(2, state_kind="new", changed=True), t(3, "DONE")]
    assert find(moved_on, FAILED, None).kind != K.DEAD_ACTION


def test_missing_evidence_leaves_a_dead_action_undecided():
    undecided_later = [t(1, high_risk=True, effect=False), t(2, high_risk=True, effect=None), t(3, "DONE")]
    assert find(undecided_later, FAILED, None).kind == K.NOT_DETERMINED
    unseen_later = [t(1, high_risk=True, effect=False), t(2, state_kind=None), t(3, "DONE")]
    assert find(unseen_later, FAILED, None).kind == K.NOT_DETERMINED
    no_frames = [t(1, high_risk=True, effect=None, state_kind=None), t(2, "DONE")]
    assert find(no_frames, FAILED, None).kind == K.NOT_DETERMINED


# ---- ignored_message --------------------------------------------------------------------------------------


def test_an_error_message_the_agent_did_not_act_on_is_decisive_and_comes_before_a_later_dead_action():
    steps = [t(1, "TYPE", state_kind="new", changed=True),
             t(2, high_risk=True, effect=True, changed=True, state_kind="new", new_errors=("email is invalid",)),
             t(3, high_risk=True, effect=False), t(4, "DONE")]
    d = find(steps, FAILED, None)
    assert (d.step, d.kind) == (2, K.IGNORED_MESSAGE)
    assert "email is invalid" in (d.evidence or "") and "before f2.png" in (d.evidence or "")


def test_a_message_the_agent_acted_on_is_not_decisive():
    steps = [t(1, high_risk=True, effect=True, changed=True, state_kind="new", new_errors=("email is invalid",)),
             t(2, "TYPE", changed=True, state_kind="new"), t(3, "DONE")]
    assert find(steps, FAILED, None).kind != K.IGNORED_MESSAGE
    unknown = [t(1, high_risk=True, effect=True, changed=True, state_kind="new", new_errors=("bad",)),
               t(2, "TYPE", changed=None), t(3, "DONE")]
    assert find(unknown, FAILED, None).kind != K.IGNORED_MESSAGE  # what it did is unknown: undecided


# ---- loop_start -------------------------------------------------------------------------------------------


def _menu(n_returns: int) -> list[StepTrace]:
    steps = [t(1, state_kind="new", changed=True)]
    for k in range(n_returns):
        steps += [t(2 + 2 * k, state_kind="new", changed=True),
                  t(3 + 2 * k, state_kind="return", first_seen=1, changed=True)]
    return steps + [t(2 + 2 * n_returns, "DONE")]


def test_the_first_return_of_a_run_that_ends_where_it_had_been_is_the_start_of_its_loop():
    d = find(_menu(3), Failure("looped", "no_net_progress", 2, "ends on the screen after step 1"), 2)
    assert (d.step, d.kind) == (3, K.LOOP_START)
    assert "first seen at step 1" in (d.evidence or "") and "3 returns" in (d.evidence or "")


def test_one_look_back_is_no_loop_nor_a_run_that_is_not_stalled():
    looped = Failure("looped", "no_net_progress", 2, "x")
    assert find(_menu(1), looped, 2).kind != K.LOOP_START  # a single return: a look back
    assert find(_menu(3), looped, None).kind != K.LOOP_START  # it kept something: not stalled


def test_a_drift_loop_the_run_ends_in_starts_at_its_first_step():
    steps = [t(1, "TYPE", state_kind="new", changed=True), t(2, "SCROLL", loop=1), t(3, "SCROLL", loop=1),
             t(4, "SCROLL", loop=1)]
    d = find(steps, Failure("looped", "drift_loop", 4, "x"), None)
    assert (d.step, d.kind) == (2, K.LOOP_START) and "3 times" in (d.evidence or "")


# ---- stall ------------------------------------------------------------------------------------------------


def test_the_last_advance_before_a_stall_to_the_end():
    steps = [t(1, state_kind="new", changed=True), t(2, "TYPE", state_kind="new", changed=True),
             t(3, "SCROLL"), t(4, "HOVER"), t(5, "DONE")]
    d = find(steps, Failure("wrong_result", "evaluator", 5, "x"), None)
    assert (d.step, d.kind) == (2, K.STALL) and "2 acting steps" in (d.evidence or "")
    short = steps[:3] + [t(5, "DONE")]  # one acting step after the advance: a look, not a stall
    assert find(short, Failure("wrong_result", "evaluator", 5, "x"), None).kind == K.NOT_DETERMINED
    unseen = steps[:3] + [t(4, "HOVER", state_kind=None), t(5, "DONE")]
    assert find(unseen, Failure("wrong_result", "evaluator", 5, "x"), None).kind == K.NOT_DETERMINED


# ---- blocked ----------------------------------------------------------------------------------------------


def test_a_wall_the_run_ended_on_is_decisive_at_the_step_that_led_onto_it():
    steps = [t(1, "NAVIGATE", changed=True, state_kind="new"), t(2, "CLICK", blocking=("captcha",)),
             t(3, "CLICK", blocking=("captcha",)), t(4, "WAIT", blocking=("captcha",))]
    d = find(steps, Failure("blocked", "captcha", 4, "captcha at a.example/x"), None)
    assert (d.step, d.kind) == (2, K.BLOCKED) and "a CAPTCHA" in (d.evidence or "")
    wall = [t(1, high_risk=True, effect=False), t(2, blocking=("auth_redirect",)), t(3, "DONE")]
    d = find(wall, Failure("blocked", "auth_wall", 2, "auth wall at a.example/login"), None)
    assert (d.step, d.kind) == (2, K.BLOCKED)  # the wall wins over the earlier dead action
    overlay = [t(1, high_risk=True, effect=False), t(2, "DONE")]  # an overlay is no wall: its dead action decides
    assert find(overlay, Failure("blocked", "overlay", 1, "x"), None).kind == K.DEAD_ACTION


# ---- the sample runs --------------------------------------------------------------------------------------

#: Each failing sample run's decisive step and kind, read from its steps and frames (docs/failures.md).
EXPECTED = {
    "captcha-blocked": (1, "blocked"),  # the navigation to the CAPTCHA page
    "consent-overlay-off": (1, "dead_action"),  # the click the cookie banner absorbed
    "drift-loop-off": (1, "dead_action"),  # the first click on the dead button; the four after it repeat it
    "menu-toggle-aimless": (3, "loop_start"),  # the first menu closed again, back to the screen after step 1
    "nc-inbox-read": (None, "not_determined"),  # unknown and claimed: nothing shows a failure
    "nc-pay-loop": (1, "dead_action"),
    "nc-server-validation": (7, "ignored_message"),  # 'password is too short', then DONE
    "nc-signin-gave-up": (1, "blocked"),  # the click that led to the sign-in wall
    "nc-swallowed-send": (1, "dead_action"),
    "offscreen-modal-off": (1, "dead_action"),
    # the click on kick cell 10 where 9 was wanted (frames 003 -> 004): only its contract's grid check sees it
    "sequencer-near-miss": (3, "contract_check"),
    "terms-checkbox-off": (1, "dead_action"),
    "ticker-dead-send": (3, "dead_action"),  # the Send that did nothing; the waits after it are its consequence
    "validation-flash-off": (1, "dead_action"),
}
#: The labelled kinds of steps each decisive kind may rest on (sample_runs/labels.json).
STEP_KINDS = {
    "blocked": {"navigation_to_blocking_page", "auth_redirect"},
    "dead_action": {"click_absorbed_by_overlay", "drift_loop_dead_button", "click_absorbed_by_transparent_widget",
                    "modal_mounted_offscreen", "click_on_disabled_button", "dead_click_ticker", "validation_flash"},
    "ignored_message": {"server_validation_error"},
    "loop_start": {"menu_toggle"},
    "contract_check": {"toggle"},
}


def test_each_failing_sample_run_has_the_decisive_step_its_steps_show(sample_ledger, labels):
    runs = _runs(sample_ledger)
    got = {k: (r["decisive_step"], r["decisive_kind"]) for k, r in runs.items() if r["decisive_kind"]}
    assert got == EXPECTED
    for run_id, (step, kind) in EXPECTED.items():
        if step is None:
            continue
        label = labels[run_id]["steps"][str(step)]
        assert label["kind"] in STEP_KINDS[kind], (run_id, label)
        if kind == "dead_action":
            assert label["effect"] is False, run_id
        assert f"before frames/{step:03d}.png, after frames/{step + 1:03d}.png" in runs[run_id]["decisive_evidence"]
    assert all(r["decisive_kind"] is None for r in runs.values() if r["failure_mode"] is None)


def test_timeline_marks_the_decisive_step(sample_ledger):
    res = runner.invoke(app, ["timeline", str(sample_ledger), "menu-toggle-aimless"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    mark = next(i for i, line in enumerate(lines) if line.startswith("DECISIVE"))
    step = max(i for i in range(mark) if lines[i].startswith("step "))
    assert lines[step].startswith("step 3 ") and "loop_start: CLICK went back" in lines[mark]
    assert any(line.startswith("decisive  loop_start at step 3 [controllable]") for line in lines)


def test_the_report_opens_a_failing_run_at_its_decisive_step(sample_ledger, tmp_path):
    """The index links a run that did not pass to its decisive step on its page (its before and after frames), and
    the page says the decisive error with a link to that step (issue 51)."""
    import trajcheck
    from trajcheck.render.htmlreport import page_name

    rep = trajcheck.report(sample_ledger, tmp_path / "rep", max_runs=3)
    index = Path(rep.index).read_text()
    name = page_name("nc-server-validation")
    assert f'href="runs/{name}.html#step-7"' in index
    assert f'href="runs/{page_name("consent-overlay-on")}.html"' in index  # a passing run: its page's top
    page = (tmp_path / "rep" / "runs" / f"{name}.html").read_text()
    assert '<b>decisive error</b> ignored_message at <a href="#step-7">step 7</a> (controllable)' in page
    assert '<div id="step-7">' in page
