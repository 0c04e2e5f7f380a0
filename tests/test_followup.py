"""After a warning of the perceptual verifier: what the agent did next, whether it was shown the warning, whether the
warning was false (analyzers/followup.py; docs/perceptual.md, "After a warning").

The rules are checked one by one on steps written here, then on the sample runs recorded in Chromium, whose
stories are known from their steps and labels.json:

- consent-overlay-on (verifier on): step 1 clicks Subscribe under the cookie box, which eats the click (the
  warning); step 2 accepts the box (another element, no high-risk keyword); step 3 clicks #subscribe again and the
  success message appears; step 4 DONE.
- drift-loop-off (verifier off): steps 1-5 click the dead Send button at (938, 429), the screen never changes, and
  the run ends at its step budget with no DONE.
- validation-flash-on: step 2 clicks the email field; trajcheck sees the focus ring (an effect), the seed's pHash
  does not (its warning only); the runner recorded its own verdict, true, and no feedback.
- offscreen-modal-on/off: the Delete click mounts the confirmation dialog 1,900 px below the fold: nothing on the
  screen, two new buttons in the DOM.
- ticker-dead-send: step 3's Send is dead; two WAITs on a screen where only the clock ticks, then DONE.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from trajcheck.store import ledger
from trajcheck.analyzers.followup import FollowStep, Followup, NONE, follow, followups, in_fact, same_target, shown
from trajcheck.analyzers.loops import action_key
from trajcheck.queries.comparison import compare
from trajcheck.scoring.pipeline import score_paths
from trajcheck.base.reasons import EffectInFactBasis as B, WarningFollowup as F, WarningShownSource as S

from conftest import REALRUNS, SAMPLES, copy_run, read_steps, write_steps

PAGE = "http://shop.test/cart"


def step(index: int, action_type: str = "CLICK", x: float | None = None, y: float | None = None,
         element: str | None = None, keys: str | None = None, **kw: Any) -> FollowStep:
    """A step as the follow-up reads it; a click at a point unless told otherwise, on PAGE before and after."""
    kw.setdefault("url_before", PAGE)
    kw.setdefault("url_after", PAGE)
    point = (x, y) if x is not None and y is not None else None
    return FollowStep(index=index, action_type=action_type,
                      key=action_key(action_type, x, y, keys, None, None, element), element=element, point=point, **kw)


def dead(index: int, x: float = 500, y: float = 300, **kw: Any) -> FollowStep:
    """A high-risk click at (x, y) with no effect under both rules: a warning."""
    return step(index, x=x, y=y, high_risk=True, verdict=False, changed=False, verdict_seed=False,
                changed_seed=False, **kw)


def worked(index: int, x: float = 500, y: float = 300, **kw: Any) -> FollowStep:
    """A high-risk click at (x, y) with an effect under both rules."""
    return step(index, x=x, y=y, high_risk=True, verdict=True, changed=True, verdict_seed=True, changed_seed=True,
                **kw)


# --- what followed: one rule at a time ---------------------------------------------------------------------------

def test_a_retry_on_the_same_point_that_works_is_recovered_whatever_came_between() -> None:
    # a click elsewhere without a high-risk keyword (a cookie box accepted) decides nothing; the retry 10 px
    # away is the same target
    steps = [dead(1), step(2, x=900, y=700, changed=True), worked(3, x=510, y=290)]
    assert follow(steps, 0) == (F.RECOVERED, 3)


def test_the_same_dead_click_again_is_repeated() -> None:
    assert follow([dead(1), dead(2, x=516, y=284)], 0) == (F.REPEATED, 2)
    # a point 17 px away is another target: a high-risk click there with no effect is moving on
    assert follow([dead(1), dead(2, x=517, y=300)], 0) == (F.MOVED_ON, 2)


def test_the_same_element_is_the_same_target_wherever_its_point() -> None:
    a = dead(1, element="#send")
    assert same_target(a, dead(2, x=10, y=10, element="#send"))
    assert not same_target(a, dead(2, element="#cancel"))  # the same point, another element
    assert follow([a, dead(2, x=10, y=10, element="#send")], 0) == (F.REPEATED, 2)


def test_another_action_on_the_same_target_that_changes_nothing_decides_nothing() -> None:
    steps = [dead(1), step(2, "DOUBLE_CLICK", x=500, y=300, changed=False), step(3, "SCROLL", x=640, y=400)]
    assert follow(steps, 0) == (F.RUN_ENDED, None)
    # ... but with an effect it is a recovery
    assert follow([dead(1), step(2, "DOUBLE_CLICK", x=500, y=300, changed=True)], 0) == (F.RECOVERED, 2)


def test_the_next_high_risk_action_elsewhere_decides() -> None:
    assert follow([dead(1), step(2, "TYPE"), worked(3, x=100, y=100)], 0) == (F.RECOVERED, 3)
    assert follow([dead(1), step(2, "TYPE"), dead(3, x=100, y=100)], 0) == (F.MOVED_ON, 3)


def test_done_or_fail_before_anything_else_is_declared_done() -> None:
    steps = [dead(1), step(2, "WAIT"), step(3, "WAIT"), step(4, "DONE")]
    assert follow(steps, 0) == (F.DECLARED_DONE, 4)
    assert follow([dead(1), step(2, "FAIL")], 0) == (F.DECLARED_DONE, 2)
    # a DONE after the recovery is not reached
    assert follow([dead(1), worked(2), step(3, "DONE")], 0) == (F.RECOVERED, 2)


def test_acting_on_another_page_is_moving_on_but_a_wait_that_sees_the_page_go_is_not() -> None:
    away = step(2, "NAVIGATE", url_after="http://shop.test/help")
    assert follow([dead(1), away], 0) == (F.MOVED_ON, 2)
    # a query string on the same page is the same page
    assert follow([dead(1), step(2, url_after=PAGE + "?tab=2")], 0) == (F.RUN_ENDED, None)
    # the warned click's page may change during a WAIT (a delayed effect of its own): not the agent moving on
    assert follow([dead(1), step(2, "WAIT", url_after="http://shop.test/done")], 0) == (F.RUN_ENDED, None)


def test_a_deciding_step_without_frames_leaves_the_follow_up_unknown() -> None:
    assert follow([dead(1), step(2, x=500, y=300, high_risk=True)], 0) == (None, 2)
    assert follow([dead(1), step(2, x=90, y=90, high_risk=True)], 0) == (None, 2)


def test_each_rule_follows_its_own_verdicts() -> None:
    # the step after the warning: trajcheck sees its focus ring, the seed's pHash does not
    focus = step(2, x=100, y=100, high_risk=True, verdict=True, changed=True, verdict_seed=False,
                 changed_seed=False)
    steps = [dead(1), focus, worked(3)]
    assert follow(steps, 0) == (F.RECOVERED, 2)
    assert follow(steps, 0, seed=True) == (F.MOVED_ON, 2)
    # a retry that is not high-risk is judged by each rule's change test
    retry = step(2, x=500, y=300, changed=False, changed_seed=True)
    assert follow([dead(1), retry], 0)[0] is F.REPEATED
    assert follow([dead(1), retry], 0, seed=True)[0] is F.RECOVERED


def test_followups_mark_the_warned_steps_only() -> None:
    focus = step(2, x=100, y=100, high_risk=True, verdict=True, changed=True, verdict_seed=False,
                 changed_seed=False)
    found = followups([dead(1), focus, step(3, "DONE")], verifier_on=None, passed=False)
    assert found[0].followup is F.RECOVERED and found[0].followup_seed is F.MOVED_ON and found[0].step == 2
    # the seed's warning only: no follow-up of trajcheck's rule, the seed's own
    assert (found[1].followup, found[1].step, found[1].followup_seed) == (None, None, F.DECLARED_DONE)
    assert found[2] == NONE


# --- was it shown ------------------------------------------------------------------------------------------------

def test_shown_from_the_recorded_feedback_then_the_recorded_verdict_then_the_arm() -> None:
    line = "clicked (no visible change); WARNING: high-risk action had no observed effect (no_pixel_change)"
    assert shown(dead(1, recorded_feedback=line), False, True) == (True, S.RECORDED_FEEDBACK)
    assert shown(dead(1, recorded_feedback="clicked", recorded_effect=False), True, True) == \
        (False, S.RECORDED_FEEDBACK)
    assert shown(dead(1, recorded_effect=False), None, True) == (True, S.RECORDED_VERDICT)
    assert shown(dead(1, recorded_effect=True), True, True) == (False, S.RECORDED_VERDICT)
    assert shown(dead(1), False, True) == (False, S.RUN_CONFIG)
    assert shown(dead(1), True, True) == (True, S.RUN_CONFIG)
    # with the verifier on, a step only the seed's rule warned on: which rule the runner used is not recorded
    assert shown(dead(1), True, False) == (None, None)
    assert shown(dead(1), None, True) == (None, None)


# --- was it false ------------------------------------------------------------------------------------------------

def test_a_changed_url_or_skeleton_is_an_effect_in_fact() -> None:
    assert in_fact([dead(1, url_after=PAGE + "?sent=1")], 0, False) == (True, B.URL_CHANGED)
    assert in_fact([dead(1, dom_changed=True)], 0, False) == (True, B.DOM_CHANGED)
    assert in_fact([dead(1, dom_changed=False)], 0, False) == (False, None)


def test_a_later_frame_before_the_agent_acts_again() -> None:
    # a WAIT whose frame shows another screen than the warned step's post frame
    assert in_fact([dead(1, state=0), step(2, "WAIT", state=1)], 0, False) == (True, B.LATER_FRAME)
    # the next action's own pre frame (not the warned step's post frame again) shows another screen
    assert in_fact([dead(1, state=0), step(2, own_pre_state=1, state=2)], 0, False) == (True, B.LATER_FRAME)
    # the next action's post frame is its own doing, not a later frame of the warned step: without URLs and DOM
    # snapshots, nothing tells
    assert in_fact([dead(1, state=0, url_before=None, url_after=None), step(2, state=2)], 0, False) == (None, None)
    # WAITs on the same screen (a clock ticking is no other screen): the warning stands
    assert in_fact([dead(1, state=0), step(2, "WAIT", state=0), step(3, "DONE", state=0)], 0, False) == (False, None)


def test_nothing_to_tell_by_is_unknown() -> None:
    bare = dead(1, url_before=None, url_after=None)
    assert in_fact([bare], 0, False) == (None, None)


def test_the_run_passing_counts_only_for_its_only_candidate() -> None:
    bare = [dead(1, url_before=None, url_after=None), step(2, "DONE", url_before=None, url_after=None)]
    assert in_fact(bare, 0, True) == (True, B.RUN_PASSED)
    assert in_fact(bare, 0, False) == (None, None)
    # a later high-risk action could have done it
    later = [dead(1, url_before=None, url_after=None), dead(2, x=90, y=90, url_before=None, url_after=None)]
    assert in_fact(later, 0, True) == (None, None)
    # so could an earlier one that had an effect
    earlier = [worked(1, url_before=None, url_after=None), dead(2, x=90, y=90, url_before=None, url_after=None)]
    assert in_fact(earlier, 1, True) == (None, None)
    assert followups(bare, None, True)[0].in_fact_basis is B.RUN_PASSED


# --- the sample runs ---------------------------------------------------------------------------------------------

def _steps(ledger_dir: Path, run_id: str) -> dict[int, dict[str, Any]]:
    res = ledger.query(ledger_dir, "select step_index, warning_followup, warning_followup_step, "
                                   "warning_followup_seed, warning_shown, warning_shown_source, effect_in_fact, "
                                   f"effect_in_fact_basis from steps where run_id = '{run_id}' order by step_index")
    return {r[0]: dict(zip(res.columns[1:], r[1:])) for r in res.rows}


def _warned(**kw: Any) -> dict[str, Any]:
    row = {"warning_followup": None, "warning_followup_step": None, "warning_followup_seed": None,
           "warning_shown": None, "warning_shown_source": None, "effect_in_fact": None, "effect_in_fact_basis": None}
    return {**row, **kw}


def test_a_warning_followed_by_a_successful_retry_is_recovered(sample_ledger: Path) -> None:
    got = _steps(sample_ledger, "consent-overlay-on")
    assert got[1] == _warned(warning_followup="recovered", warning_followup_step=3, warning_followup_seed="recovered",
                             warning_shown=True, warning_shown_source="recorded_feedback", effect_in_fact=False)
    assert got[2] == got[3] == got[4] == _warned()


def test_a_warning_followed_by_the_same_dead_click_is_repeated(sample_ledger: Path) -> None:
    got = _steps(sample_ledger, "drift-loop-off")
    off = {"warning_shown": False, "warning_shown_source": "run_config", "effect_in_fact": False}
    assert [got[i] for i in (1, 2, 3, 4)] == [
        _warned(warning_followup="repeated", warning_followup_step=i + 1, warning_followup_seed="repeated", **off)
        for i in (1, 2, 3, 4)]
    assert got[5] == _warned(warning_followup="run_ended", warning_followup_seed="run_ended", **off)


def test_the_rules_differ_and_each_has_its_follow_up(sample_ledger: Path) -> None:
    # the seed's rule alone warns on validation-flash-on's step 2; the next step that decides it is step 5, the
    # Submit that navigates (steps 3 and 4 select and type with no target of their own); the runner recorded its
    # own verdict (true) and no feedback: it showed nothing. Its step 1 is recovered at step 2 by trajcheck's rule,
    # while by the seed's the click on the field at step 2 had no effect: moved on.
    got = _steps(sample_ledger, "validation-flash-on")
    assert got[1]["warning_followup"] == "recovered" and got[1]["warning_followup_seed"] == "moved_on"
    assert got[2] == _warned(warning_followup_seed="recovered", warning_shown=False,
                             warning_shown_source="recorded_verdict", effect_in_fact=False)
    # the seed's rule sees the hover restyle of offscreen-modal's Delete as an effect: trajcheck's warning only
    for run_id, followup in (("offscreen-modal-on", "recovered"), ("offscreen-modal-off", "declared_done")):
        assert _steps(sample_ledger, run_id)[1] == _warned(
            warning_followup=followup, warning_followup_step=3 if followup == "recovered" else 2,
            warning_shown=run_id.endswith("-on"),
            warning_shown_source="recorded_feedback" if run_id.endswith("-on") else "run_config",
            effect_in_fact=True, effect_in_fact_basis="dom_changed")


def test_waits_on_a_ticking_screen_are_no_later_effect(sample_ledger: Path) -> None:
    got = _steps(sample_ledger, "ticker-dead-send")
    assert got[3] == _warned(warning_followup="declared_done", warning_followup_step=6, warning_shown=True,
                             warning_shown_source="recorded_feedback", effect_in_fact=False)


def test_runs_count_their_warnings_by_what_followed(sample_ledger: Path) -> None:
    res = ledger.query(sample_ledger, "select run_id, effect_no_effect, warnings_recovered, warnings_repeated, "
                                      "warnings_false, warnings_false_checked from runs where effect_no_effect > 0 "
                                      "order by run_id")
    assert res.rows == [
        ("consent-overlay-off", 1, 0, 0, 0, 1), ("consent-overlay-on", 1, 1, 0, 0, 1),
        ("drift-loop-off", 5, 0, 4, 0, 5), ("drift-loop-on", 1, 1, 0, 0, 1),
        ("nc-consent-recovered", 2, 1, 1, 0, 2), ("nc-pay-loop", 4, 0, 3, 0, 4), ("nc-swallowed-send", 1, 0, 0, 0, 1),
        ("offscreen-modal-off", 1, 0, 0, 1, 1), ("offscreen-modal-on", 1, 1, 0, 1, 1),
        ("terms-checkbox-off", 1, 0, 0, 0, 1), ("terms-checkbox-on", 1, 1, 0, 0, 1),
        ("ticker-dead-send", 1, 0, 0, 0, 1), ("validation-flash-off", 1, 0, 0, 0, 1),
        ("validation-flash-on", 1, 1, 0, 0, 1)]


def test_the_recovery_rate_per_arm_is_in_compare(sample_ledger: Path) -> None:
    arms = {a.name: a.warnings for a in compare([sample_ledger], "config.perceptual_verifier").arms}
    on, off = arms["true"], arms["false"]
    assert on is not None and off is not None
    # verifier on: 5 of its 6 warnings recovered (ticker-dead-send declared done); off: none of 9
    assert (on.recovered.k, on.recovered.n, off.recovered.k, off.recovered.n) == (5, 6, 0, 9)
    assert on.recovered.low is not None and off.recovered.high is not None and on.recovered.low > off.recovered.high
    assert (on.shown["shown"], off.shown["not_shown"]) == (6, 9)
    # offscreen-modal's Delete in each arm
    assert (on.false.k, on.false.n, off.false.k, off.false.n) == (1, 6, 1, 9)


def test_a_screen_that_changes_during_a_wait_is_a_delayed_effect(tmp_path: Path) -> None:
    # consent-overlay-on with its step 2 (the cookie box accepted) recorded as a WAIT: the box goes away while the
    # agent waits, so the Subscribe click of step 1 is taken to have done it after its post frame; the WAIT
    # decides nothing, and the retry at step 3 works
    run = copy_run(SAMPLES / "consent-overlay-on", tmp_path / "runs" / "delayed")
    steps = read_steps(run)
    steps[1]["action"] = {"type": "WAIT"}
    steps[1]["reasoning"] = "Wait for the page."
    write_steps(run, steps)
    meta = json.loads((run / "run.json").read_text())
    meta["run_id"] = "delayed"
    (run / "run.json").write_text(json.dumps(meta))
    [res] = score_paths([run], jobs=1).results
    first = res.steps[0]
    assert (first["warning_followup"], first["warning_followup_step"]) == ("recovered", 3)
    assert (first["effect_in_fact"], first["effect_in_fact_basis"]) == (True, "later_frame")
    assert (res.run["warnings_false"], res.run["warnings_false_checked"]) == (1, 1)


def test_an_old_ledger_compares_with_its_follow_ups_unknown(tmp_path: Path) -> None:
    # written at schema version 2, before the follow-ups: consent-overlay-off's warning is counted, its follow-up
    # and whether it was false are unknown, so no rate is computed over it
    old = shutil.copytree(Path(__file__).parent / "fixtures" / "ledger_v2", tmp_path / "L")
    [off] = [a.warnings for a in compare([old], "config.perceptual_verifier").arms if a.name == "false"]
    assert off is not None
    assert (off.count, off.followups["unknown"], off.recovered.n, off.false.n) == (1, 1, 0, 0)


def test_a_run_without_warnings_has_none() -> None:
    assert followups([worked(1), step(2, "DONE")], True, True) == [Followup(), Followup()]


ORDER_RUN = REALRUNS / "browsergym-fork" / "2024-11-20_16-48-41_DemoAgentArgs_on_workarena.servicenow.order-ipad-pro_5"


@pytest.mark.realruns
@pytest.mark.skipif(not ORDER_RUN.is_dir(), reason="../shared/realruns (third-party BrowserGym runs) is not beside "
                                                   "the checkout")
def test_a_real_delayed_effect_makes_the_seeds_warning_false() -> None:
    # WorkArena, BrowserGym: step 3 clicks "Order Now"; its post frame shows the button greyed while the request is
    # sent (trajcheck: content changed; the seed's pHash: no change, a warning). The agent reads the grey button as
    # disabled and reports the task infeasible (step 4); the frame after that shows "Thank you, your request has
    # been submitted": the click had worked
    [res] = score_paths([ORDER_RUN], jobs=1).results
    s3 = res.steps[3]
    assert (s3["step_index"], s3["action_effect_observed"], s3["action_effect_observed_seed"]) == (3, True, False)
    assert (s3["warning_followup"], s3["warning_followup_seed"]) == (None, "declared_done")
    assert (s3["effect_in_fact"], s3["effect_in_fact_basis"]) == (True, "later_frame")
    # a BrowserGym log records no perceptual verifier: nobody knows whether a warning was shown
    assert (s3["warning_shown"], s3["warning_shown_source"]) == (None, None)
