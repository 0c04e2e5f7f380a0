"""What trajcheck finds on the recorded sample runs (real Chromium frames, sample_runs/).

Each test names a case the recorder set up on purpose (sample_runs/recorder/README.md)
and checks the finding against the ground truth the recorder wrote to labels.json.
"""

from __future__ import annotations

import json

import pytest

from trajcheck.store import ledger


def _steps(sample_ledger, where: str) -> list[dict]:
    return ledger.query(sample_ledger, f"select * from steps where {where} order by run_id, step_index").records()


def _run(sample_ledger, run_id: str) -> dict:
    rows = ledger.query(sample_ledger, f"select * from runs where run_id = '{run_id}'").records()
    assert len(rows) == 1, run_id
    return rows[0]


def _labelled(labels: dict, kinds: set[str]) -> list[tuple[str, int, dict]]:
    out = [(rid, int(i), lab) for rid, run in labels.items() for i, lab in run["steps"].items() if lab["kind"] in kinds]
    assert out, kinds
    return out


SILENT_FAILURES = {"click_absorbed_by_overlay", "validation_flash", "modal_mounted_offscreen",
                   "drift_loop_dead_button", "click_on_disabled_button", "dead_click_ticker"}


@pytest.mark.slow
def test_every_silent_failure_is_flagged(sample_ledger, labels):
    for rid, idx, lab in _labelled(labels, SILENT_FAILURES):
        assert lab["effect"] is False
        [row] = _steps(sample_ledger, f"run_id = '{rid}' and step_index = {idx}")
        assert row["effect_high_risk"], (rid, idx)
        assert row["action_effect_observed"] is False, (rid, idx, row["effect_reason"], row["effect_filtered"])
        assert row["effect_feedback"].endswith(f"({row['effect_reason']})")


def test_faint_message_and_far_toast_are_effects(sample_ledger, labels):
    faint = _steps(sample_ledger, "run_id = 'dark-faint-and-toast' and step_index = 2")[0]
    toast = _steps(sample_ledger, "run_id = 'dark-faint-and-toast' and step_index = 3")[0]
    assert labels["dark-faint-and-toast"]["steps"]["2"]["kind"] == "faint_message"
    assert faint["action_effect_observed"] is True
    assert faint["effect_region_distance"] <= 4  # the faint line barely moves the region hash
    assert toast["action_effect_observed"] is True
    assert toast["effect_region_distance"] <= 4  # nothing changed around the click ...
    assert toast["effect_global_distance"] > toast["effect_region_distance"]  # ... the toast is far away


def test_hover_restyle_fools_the_seed_rule_but_not_trajcheck(sample_ledger):
    # The outline-danger button fills red under the pointer: 20+ bits of pHash, no effect.
    row = _steps(sample_ledger, "run_id = 'offscreen-modal-off' and step_index = 1")[0]
    assert row["effect_region_distance"] > 10
    assert row["action_effect_observed_seed"] is True
    assert row["action_effect_observed"] is False and row["effect_reason"] == "only_pointer_restyle"
    assert "restyle" in row["effect_filtered"]


def test_ticker_dead_click_fools_the_seed_rule_but_not_trajcheck(sample_ledger):
    row = _steps(sample_ledger, "run_id = 'ticker-dead-send' and step_index = 3")[0]
    assert row["action_effect_observed_seed"] is True
    assert row["action_effect_observed"] is False
    assert {"ambient", "outline"} <= set(row["effect_filtered"])  # the clock, and the focus ring leaving the field


def test_checkbox_tick_is_content_not_restyle(sample_ledger):
    row = _steps(sample_ledger, "run_id = 'terms-checkbox-on' and step_index = 2")[0]
    assert row["effect_content_changed"] is True and row["action_effect_observed"] is True


def test_hidpi_points_are_scaled_into_the_frame(sample_ledger):
    rows = _steps(sample_ledger, "run_id = 'auth-redirect-hidpi' and action_type = 'CLICK'")
    assert rows and all(r["frame_width"] == 2560 and r["effect_point"] == "in_frame" for r in rows)
    box = json.loads(rows[0]["effect_region_box"]) if isinstance(rows[0]["effect_region_box"], str) else rows[0]["effect_region_box"]
    cx = (box[0] + box[2]) / 2
    assert abs(cx - 2 * rows[0]["action_x"]) <= 1


def test_recorded_verdicts_agree_with_the_recomputation(sample_ledger):
    rows = _steps(sample_ledger, "recorded_action_effect_observed is not null")
    assert len(rows) >= 10
    assert all(r["effect_agrees_recorded"] for r in rows), [(r["run_id"], r["step_index"]) for r in rows
                                                           if not r["effect_agrees_recorded"]]


# -- issue 3: reward classes on the recorded cases ------------------------------------------

def _reasons(row: dict) -> list[str]:
    return [r.split(":")[0] for r in row["reward_reasons"]]


def test_auth_redirect_is_negative(sample_ledger):
    row = _steps(sample_ledger, "run_id = 'auth-redirect-hidpi' and step_index = 1")[0]
    assert "next=" in row["url_after"]
    assert "auth_redirect" in _reasons(row) and row["reward_class"] == "negative"


def test_captcha_page_is_blocking_from_the_first_step(sample_ledger):
    rows = _steps(sample_ledger, "run_id = 'captcha-blocked'")
    assert all("captcha" in _reasons(r) and r["reward_class"] == "negative" for r in rows)
    assert _run(sample_ledger, "captcha-blocked")["reward_first_blocking_step"] == 1


def test_stale_element_then_fresh_read_then_success(sample_ledger):
    fail, read, click = _steps(sample_ledger, "run_id = 'stale-element-recovery' and step_index between 2 and 4")
    assert "not attached" in fail["executor_error"] and "executor_stale_ref" in _reasons(fail)
    assert "fresh_read_after_failure" in _reasons(read) and read["reward_score"] > fail["reward_score"]
    assert click["reward_class"] == "strong_positive"


def test_drift_loop_is_found_and_penalised(sample_ledger):
    off = _run(sample_ledger, "drift-loop-off")
    on = _run(sample_ledger, "drift-loop-on")
    assert off["longest_loop"] >= 4 and on["longest_loop"] < 2
    rows = _steps(sample_ledger, "run_id = 'drift-loop-off' and loop_len is not null")
    assert len({r["loop_id"] for r in rows}) == 1
    assert any("drift_loop" in _reasons(r) for r in rows)


def test_done_after_unchanged_waits_is_gated(sample_ledger):
    done = _steps(sample_ledger, "run_id = 'ticker-dead-send' and action_type = 'DONE'")[0]
    assert done["reward_done_gate"] is True


# -- issue 4: referee on the sequencer -------------------------------------------------------

def test_grid_detector_on_real_frames(sample_ledger):
    for rid, active in (("sequencer-correct", [1, 5, 9, 13]), ("sequencer-near-miss", [1, 5, 10, 13])):
        checks = json.loads(_run(sample_ledger, rid)["contract_checks"])
        grid = next(c for c in checks if c["type"] == "grid")
        assert grid["evidence"]["active_steps"] == active
        assert grid["evidence"]["margin"] >= grid["evidence"]["min_margin"]
        assert grid["passed"] is (active == [1, 5, 9, 13])


@pytest.mark.slow
def test_near_miss_with_a_lying_judge_is_never_pass(sample_ledger):
    r = _run(sample_ledger, "sequencer-near-miss")
    assert r["det_verdict"] == "fail" and r["judge_verdict"] == "pass"
    assert r["eval_final_verdict"] == "uncertain" and r["disagreement_reason"] == "judge_disagreement"
    assert r["false_claim"] is True and r["lesson_promotable"] is False
    assert "missing_required=[9]" in r["lesson_candidate"]
    ok = _run(sample_ledger, "sequencer-correct")
    assert ok["eval_final_verdict"] == "pass" and ok["judge_model"] == "reference-phash" and ok["lesson_promotable"]


@pytest.mark.parametrize("rid", ["consent-overlay-off", "validation-flash-off", "offscreen-modal-off",
                                 "terms-checkbox-off"])
def test_off_arm_false_claims(sample_ledger, labels, rid):
    assert labels[rid]["outcome"] == "fail" and labels[rid]["claims_success"]
    assert _run(sample_ledger, rid)["false_claim"] is True


def test_final_verdict_matches_every_labelled_outcome_it_covers(sample_ledger, labels):
    rows = ledger.query(sample_ledger, "select run_id, eval_final_verdict from runs").records()
    covered = [(r["run_id"], r["eval_final_verdict"]) for r in rows if r["eval_final_verdict"] in ("pass", "fail")]
    assert len(covered) >= 15
    for rid, verdict in covered:
        assert verdict == labels[rid]["outcome"], rid


NO_CONTRACT = ("nc-swallowed-send", "nc-server-validation", "nc-pay-loop", "nc-register-navigation",
               "nc-profile-toast", "nc-consent-recovered", "nc-inbox-read", "nc-signin-gave-up")


@pytest.mark.slow
def test_runs_without_contract_or_judge_get_the_evidence_verdict(sample_ledger, labels):
    """Issue 12: recorded without a contract, a judge or an evaluator score; their own evidence decides,
    and it agrees with the label wherever it is decisive."""
    want = {"nc-swallowed-send": ("fail", "last_high_risk_no_effect"),
            "nc-server-validation": ("fail", "error_after_last_high_risk"),
            "nc-pay-loop": ("fail", "ends_in_loop"),
            "nc-register-navigation": ("pass", "navigated_after_last_high_risk"),
            "nc-profile-toast": ("pass", "success_after_last_high_risk"),
            "nc-consent-recovered": ("pass", "success_after_last_high_risk"),
            "nc-inbox-read": ("unknown", None),
            "nc-signin-gave-up": ("fail", "ends_blocked")}
    assert set(want) == set(NO_CONTRACT)
    for rid, (verdict, code) in want.items():
        r = _run(sample_ledger, rid)
        assert (r["det_verdict"], r["judge_verdict"], r["evaluator_verdict"]) == ("not_applicable", None, None), rid
        assert r["eval_final_verdict"] == r["evidence_verdict"] == verdict, rid
        assert r["verdict_source"] == ("none" if verdict == "unknown" else "evidence"), rid
        if verdict != "unknown":
            assert verdict == labels[rid]["outcome"], rid
            assert r["final_confidence"] <= 0.6, rid  # evidence alone is the lowest authority
        codes = [c.split("@")[0] for c in r["evidence_reasons"]]
        assert (code in codes) if code else codes == [], (rid, codes)
        assert r["claimed_success"] == labels[rid]["claims_success"], rid
        assert r["lesson_promotable"] is False, rid


@pytest.mark.slow
def test_false_claims_without_contracts_are_caught(sample_ledger, labels):
    claims = {rid for rid in NO_CONTRACT if _run(sample_ledger, rid)["false_claim"]}
    truth = {rid for rid in NO_CONTRACT if labels[rid]["claims_success"] and labels[rid]["outcome"] == "fail"}
    assert claims == truth == {"nc-swallowed-send", "nc-server-validation", "nc-pay-loop"}
    for rid in claims:
        assert _run(sample_ledger, rid)["false_claim_basis"] == "evidence"


def test_an_honest_give_up_is_not_a_false_claim(sample_ledger):
    r = _run(sample_ledger, "nc-signin-gave-up")
    assert (r["claimed_success"], r["claim_reason"], r["false_claim"]) == (False, "message_admits_failure", False)
    assert r["claim_evidence"] == "agent could not: I could not"
    [click] = _steps(sample_ledger, "run_id = 'nc-signin-gave-up' and step_index = 1")
    assert any(c.startswith("auth_redirect:") for c in click["reward_reasons"])
