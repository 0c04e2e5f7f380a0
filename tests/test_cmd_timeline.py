"""`trajcheck timeline`: one run step by step, exact JSON and text, on sample runs whose story is known.

consent-overlay-on is the swallowed click: the agent clicks Subscribe (step 1) under a cookie banner that eats
the click, accepts the banner (step 2), clicks Subscribe again (step 3) and is done (step 4). The recorded
fields (actions, reasoning, URLs, the runner's feedback) are those of sample_runs/consent-overlay-on/*.json*;
labels.json says step 1 had no effect and steps 2-3 had one; the rewards follow docs/reward.md.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import run_json, sample_run_dirs


def text_of(ledger_dir: Path, run_id: str) -> list[str]:
    """The timeline's text lines (without rich's right padding)."""
    res = CliRunner().invoke(app, ["timeline", str(ledger_dir), run_id])
    assert res.exit_code == 0, res.output
    return [line.rstrip() for line in res.stdout.splitlines()]


URL = "http://sample.local/newsletter.html"
NO_CHANGE = "Page content did not change (no interactive element or alert changes)"
WARNING = "clicked (no visible change); WARNING: high-risk action had no observed effect (no_pixel_change)"
SUBSCRIBED = "New message appeared: Subscribed! Check your inbox to confirm."
#: What every step of the run shares: no keys, text or URL typed, the executor succeeded, no navigation,
#: no drift loop.
COMMON = {"action_keys": None, "action_text": None, "action_url": None, "executor_ok": True,
          "executor_error": None, "url_before": URL, "url_after": URL, "loop_id": None, "loop_len": None,
          # every step has a DOM snapshot: nothing is read on screen (--ocr auto)
          "screen_text": None, "screen_text_boxes": None, "screen_text_new": None, "screen_messages": None,
          "screen_text_agrees": None,
          # no warning: nothing followed one
          "warning_followup": None, "warning_followup_step": None, "warning_shown": None,
          "warning_shown_source": None, "effect_in_fact": None, "effect_in_fact_basis": None}
CONSENT_ON = {
    "run": {
        "run_id": "consent-overlay-on", "task_id": "newsletter-subscribe",
        "goal": "Subscribe jane.doe@example.com to the Acme Weekly newsletter.", "status": "ok", "error": "",
        "outcome_status": "done", "n_steps": 4,
        # two high-risk clicks (1 and 3), one without effect
        "perceptual_summary": {"checked": 2, "no_effect": 1},
        "det_verdict": "pass", "contract_name": "newsletter subscribed",
        "contract_checks": [{"evidence": {"pattern": "Subscribed", "selector": "[role=alert]",
                                          "texts": ["Subscribed! Check your inbox to confirm."]},
                             "name": "element_text#1", "passed": True, "type": "element_text"}],
        "judge_model": None, "judge_verdict": None, "judge_score": None, "judge_confidence": None,
        "judge_reasons": [], "judge_source": None, "judge_other": None,
        # the contract and the recorded evaluator score (1.0) agree
        "eval_final_verdict": "pass", "final_confidence": 0.9, "verdict_reason": "agreement",
        "verdict_source": "contract+evaluator", "disagreement_reason": None,
        "evidence_verdict": "pass",
        "evidence_reasons": ["success_after_last_high_risk@3: subscribed! check your inbox to confirm."],
        "evidence_confidence": 0.7, "claimed_success": True, "false_claim": False, "false_claim_basis": None,
        "lesson_promotable": True, "lesson_candidate": None,
        "reward_total": 1.65,  # -0.7 + 0.4 + 0.95 + 1.0
        "longest_loop": 0,
        # the screen with the banner (steps 1: nothing changed), without it (2), with the message (3, then DONE)
        "states_distinct": 3, "states_returning": 0.0, "oscillations": 0, "stalled_from_step": None,
        "no_net_progress": False,
        # the success message the evidence verdict read, from the DOM; no final frame read on screen
        "message_source": "dom", "message_text": "subscribed! check your inbox to confirm.",
        "screen_text_final": None, "screen_messages_final": None,
        # a flat contract: its one check holds; no rubric tree, no judge of score --judgments
        "contract_score": 1.0, "contract_tree": None, "judgments": None, "failure_mode": None, "failure_detail": None,
        "failure_details": None, "failure_step": None, "failure_evidence": None,
        "actions_after_last_frame": 0,  # its last screenshot follows its last action
        # a passing run has no failure mode, so no decisive error and no control (docs/failures.md)
        "failure_control": None, "decisive_step": None, "decisive_kind": None, "decisive_evidence": None,
        "decisive_control": None, "damage": None, "damage_evidence": None,
        # the process score (docs/failures.md): steps 1-3 act, step 1's click had no effect (2 of 3 effective),
        # steps 2 and 3 reach new screens, and the warning on step 1 was followed by a recovery at step 3:
        # (0.8 * 2 + 0.4 * 2 + 1.2 * 1) / (0.8 * 3 + 0.4 * 2 + 1.2 * 1)
        "process_score": 0.8182,
        "process_evidence": {"effective": {"k": 2, "n": 3}, "progress": {"k": 2, "n": 2},
                             "recovery": {"k": 1, "n": 1, "recovered": 1}},
    },
    "steps": [
        {**COMMON, "step_index": 1, "action_type": "CLICK", "action_x": 640.0, "action_y": 316.0,
         "reasoning": "The email is already filled in; click Subscribe to submit the form.",
         "obs_observations": ["URL did not change", NO_CHANGE, "Focus moved from div to body",
                              "Extension reported URL changed: false"],
         "obs_reason": "no_change",
         # the swallowed click: a submit with no pixel changed anywhere, so the warning the runner injected
         "effect_high_risk": True, "action_effect_observed": False, "effect_reason": "no_pixel_change",
         "action_effect_observed_seed": False, "effect_global_distance": 0, "effect_region_distance": 0,
         "effect_feedback": WARNING, "recorded_feedback": WARNING,
         # the agent accepted the banner (step 2, another target, not high-risk), then clicked Subscribe again
         # (step 3, the same element) and the message appeared; the runner's recorded feedback carries the
         # warning; the URL and the page's skeleton stayed as they were and no frame came before step 2 acted
         "warning_followup": "recovered", "warning_followup_step": 3, "warning_shown": True,
         "warning_shown_source": "recorded_feedback", "effect_in_fact": False,
         "pred_prediction": "frame_changed", "pred_held": False,
         # no_observed_effect -0.4, prediction_failed -0.3
         "reward_score": -0.7, "reward_class": "negative",
         "reward_reasons": ["no_observed_effect", "prediction_failed"], "reward_confidence": 0.85,
         "state_id": 0, "state_kind": "same", "state_returns_to": None, "oscillation_id": None},
        {**COMMON, "step_index": 2, "action_type": "CLICK", "action_x": 1072.0, "action_y": 699.0,
         "reasoning": "My click did nothing; a cookie banner covers the page. Accept it first.",
         "obs_observations": ["URL did not change",
                              "Page content updated (DOM changed; no interactive element changes detected)",
                              "DOM was mutated", "Extension reported URL changed: false"],
         "obs_reason": "client_witness_only",
         # accepting a banner is not a high-risk action: measured, not judged
         "effect_high_risk": False, "action_effect_observed": None, "effect_reason": "not_high_risk",
         "action_effect_observed_seed": None, "effect_global_distance": 24, "effect_region_distance": 31,
         "effect_feedback": None, "recorded_feedback": None, "pred_prediction": None, "pred_held": None,
         "reward_score": 0.4, "reward_class": "weak_positive", "reward_reasons": ["page_changed"],
         "reward_confidence": 0.85, "state_id": 1, "state_kind": "new", "state_returns_to": None,
         "oscillation_id": None},
        {**COMMON, "step_index": 3, "action_type": "CLICK", "action_x": 640.0, "action_y": 316.0,
         "reasoning": "The banner is gone; click Subscribe again to submit the form.",
         "obs_observations": ["URL did not change", SUBSCRIBED, "Focus moved from body to button#subscribe",
                              "DOM was mutated", "Extension reported URL changed: false"],
         "obs_reason": "changed_no_semantic_verdict",
         "effect_high_risk": True, "action_effect_observed": True, "effect_reason": "content_changed_in_region",
         "action_effect_observed_seed": True, "effect_global_distance": 4, "effect_region_distance": 12,
         "effect_feedback": None, "recorded_feedback": None, "pred_prediction": "expected", "pred_held": True,
         # expected_state_reached +0.8 and page_changed +0.4, capped below a contract's +1.0
         "reward_score": 0.95, "reward_class": "strong_positive",
         "reward_reasons": ["expected_state_reached", "page_changed"], "reward_confidence": 0.85,
         "state_id": 2, "state_kind": "new", "state_returns_to": None, "oscillation_id": None},
        {**COMMON, "step_index": 4, "action_type": "DONE", "action_x": None, "action_y": None,
         "reasoning": "Subscribed the address to the newsletter.",
         "obs_observations": ["URL did not change", NO_CHANGE, "Extension reported URL changed: false"],
         "obs_reason": "no_change",
         "effect_high_risk": False, "action_effect_observed": None, "effect_reason": "not_high_risk",
         "action_effect_observed_seed": None, "effect_global_distance": 0, "effect_region_distance": None,
         "effect_feedback": None, "recorded_feedback": None, "pred_prediction": None, "pred_held": None,
         "reward_score": 1.0, "reward_class": "strong_positive",
         "reward_reasons": ["contract_passed: newsletter subscribed"], "reward_confidence": 0.95,
         "state_id": 2, "state_kind": "same", "state_returns_to": None, "oscillation_id": None},
    ],
}


def test_timeline_json_of_the_swallowed_click(sample_ledger: Path) -> None:
    assert run_json("timeline", str(sample_ledger), "consent-overlay-on") == CONSENT_ON


def test_timeline_text_of_the_swallowed_click(sample_ledger: Path, width100: None) -> None:
    assert text_of(sample_ledger, "consent-overlay-on") == [
        "run consent-overlay-on  task newsletter-subscribe  outcome done  4 steps",
        "goal: Subscribe jane.doe@example.com to the Acme Weekly newsletter.",
        "",
        "step 1    CLICK (640, 316)",
        "why       The email is already filled in; click Subscribe to submit the form.",
        # the observations' first "URL did not change" is said once, as "URL unchanged"
        "state     URL unchanged | NO EFFECT (no_pixel_change; pHash global 0, region 0) | Page content did",
        "          not change (no interactive element or alert changes) | Focus moved from div to body |",
        "          Extension reported URL changed: false | prediction frame_changed: FAILED",
        "hint      clicked (no visible change); WARNING: high-risk action had no observed effect",
        "          (no_pixel_change)",
        "then      recovered at step 3 | shown to the agent (recorded_feedback)",
        "reward    -0.70 negative  no_observed_effect, prediction_failed (confidence 0.85)",
        "",
        "step 2    CLICK (1072, 699)",
        "why       My click did nothing; a cookie banner covers the page. Accept it first.",
        "state     URL unchanged | Page content updated (DOM changed; no interactive element changes",
        "          detected) | DOM was mutated | Extension reported URL changed: false",
        "reward    +0.40 weak_positive  page_changed (confidence 0.85)",
        "",
        "step 3    CLICK (640, 316)",
        "why       The banner is gone; click Subscribe again to submit the form.",
        # at most three observations per step
        "state     URL unchanged | effect seen (content_changed_in_region; pHash global 4, region 12) | New",
        "          message appeared: Subscribed! Check your inbox to confirm. | Focus moved from body to",
        "          button#subscribe | DOM was mutated | prediction expected: held",
        "reward    +0.95 strong_positive  expected_state_reached, page_changed (confidence 0.85)",
        "",
        "step 4    DONE",
        "why       Subscribed the address to the newsletter.",
        "state     URL unchanged | Page content did not change (no interactive element or alert changes) |",
        "          Extension reported URL changed: false",
        "reward    +1.00 strong_positive  contract_passed: newsletter subscribed (confidence 0.95)",
        "",
        "referee",
        "contract  pass  newsletter subscribed  1 check passed",
        "judge     none",
        "evidence  pass  confidence 0.7  success_after_last_high_risk@3: subscribed! check your inbox to",
        "          confirm.",
        "final     PASS  agreement  (from contract+evaluator)",
        "process   0.82: effective actions 2/3; progress 2/2; recovery 1/1 (recovered 1)",
    ]


def test_referee_of_a_disputed_run(sample_ledger: Path, width100: None) -> None:
    """sequencer-near-miss: the contract fails (step 10 instead of 9), the recorded judge says pass, so the
    final verdict is uncertain, a false claim, and the lesson says not to promote it."""
    lines = text_of(sample_ledger, "sequencer-near-miss")
    assert lines[lines.index("referee"):] == [
        "referee",
        # the failed check's evidence as a sentence (trajcheck.render.evidencetext; --format json has it raw)
        "contract  fail  kick on the quarter notes  kick row: step 9 is required but not active; step 10 is",
        "          active but forbidden (active: 1, 5, 10, 13)",
        "judge     pass  screenshot-judge (recorded) (recorded)  score 0.9  confidence 0.8",
        "evidence  pass  confidence 0.7  success_after_last_high_risk@5: saved",
        "final     UNCERTAIN  judge_disagreement  (from contract+evaluator+judge)  FALSE CLAIM: the agent",
        "          declared success (referee)",
        # the process score: every toggle drew its cell and reached a new screen; the wrong grid is the outcome's
        "process   1.00: effective actions 5/5; progress 5/5",
        # the failure mode (docs/failures.md): the contract's grid check, its evidence said in words
        # and every failed check of the result (the evaluator failed it too: issue 51, several sub-kinds)
        # ... whether the agent could have avoided it, and where the run was lost: the click on cell 10, which the
        # grid check links to (analyzers/checklink.py)
        "failure   wrong_result (grid; evaluator) at step 6 [controllable]: contract check `kick row` failed:",
        "          step 9 is required but not active; step 10 is active but forbidden (active: 1, 5, 10, 13)",
        "decisive  contract_check at step 3 [controllable]: contract check failed: CLICK at step 3 set cell",
        "          10 of the grid, which check 'kick row' forbids (before frames/003.png, after",
        "          frames/004.png)",
        "lesson    referee disagreement: contract kick on the quarter notes said fail (kick row:",
        "          missing_required=[9], forbidden_active=[10], active_steps=[1, 5, 10, 13]); the benchmark's",
        "          evaluator said fail; judge screenshot-judge (recorded) said pass (kick row shows four",
        "          active steps on the beat). Do not promote; recheck the judge rubric against the final",
        "          screenshot.",
    ]


def test_a_drift_loop_and_an_executor_error(sample_ledger: Path, width100: None) -> None:
    # drift-loop-off clicks Send five times on a screen that never changes: every step is in loop 1 of 5
    lines = text_of(sample_ledger, "drift-loop-off")
    step2 = lines.index("step 2    CLICK (938, 429)")
    assert lines[step2:lines.index("step 3    CLICK (938, 429)")] == [
        "step 2    CLICK (938, 429)",
        "why       The message does not appear to be sent yet; click Send again.",
        "state     URL unchanged | NO EFFECT (only_render_noise; pHash global 0, region 0) | Page content did",
        "          not change (no interactive element or alert changes) | Extension reported URL changed:",
        "          false | drift loop 1 (5 steps)",
        "hint      clicked (no visible change); WARNING: high-risk action had no observed effect",
        "          (only_render_noise)",
        # the same dead click at step 3; the verifier-off arm's runner injected nothing
        "then      REPEATED at step 3 | not shown to the agent (run_config)",
        "reward    -0.95 negative  drift_loop: repetition 2, no_observed_effect (confidence 0.85)",
        "",
    ]
    # stale-element-recovery: the click on a detached element fails in the executor, the agent reads again,
    # then the fresh click navigates to the message, and it answers with the amount
    lines = text_of(sample_ledger, "stale-element-recovery")
    assert lines[lines.index("step 2    CLICK (640, 139)"):lines.index("step 3    READ")] == [
        "step 2    CLICK (640, 139)",
        "why       Click the 'Invoice for March' message I found.",
        "state     URL unchanged | executor error: ElementHandle.click: Element is not attached to the DOM |",
        "          Page content did not change (no interactive element or alert changes) | Extension reported",
        "          URL changed: false",
        "reward    -0.50 negative  executor_stale_ref: ElementHandle.click: Element is not attached to the",
        "          DOM (confidence 0.85)",
        "",
    ]
    assert "state     URL -> http://sample.local/inbox/message.html?id=m3 | Element disappeared: a 'Support Your" \
        in lines
    assert 'step 5    DONE "$412.50"' in lines


def test_a_failed_check_says_why(sample_ledger: Path, width100: None) -> None:
    lines = text_of(sample_ledger, "drift-loop-off")
    [contract] = [line for line in lines if line.startswith("contract  ")]
    assert re.search(r"text_present#1: \S", contract), contract


@pytest.mark.slow
def test_every_run_shows_what_was_recorded(sample_ledger: Path) -> None:
    """For every sample run, the timeline's actions, reasoning, URLs and feedback are the recording's."""
    runs = sample_run_dirs()
    assert len(runs) == 28
    for run in runs:
        meta = json.loads((run / "run.json").read_text())
        recorded = [json.loads(line) for line in (run / "steps.jsonl").read_text().splitlines() if line.strip()]
        got = run_json("timeline", str(sample_ledger), meta["run_id"])
        assert (got["run"]["task_id"], got["run"]["goal"], got["run"]["outcome_status"], got["run"]["n_steps"]) == (
            meta["task_id"], meta["goal"], meta["outcome"]["status"], len(recorded)), run.name
        assert [(s["step_index"], s["action_type"], s["reasoning"], s["url_before"], s["url_after"],
                 s["recorded_feedback"]) for s in got["steps"]] == [
            (r["index"], r["action"]["type"], r["reasoning"], r["page"]["url_before"], r["page"]["url_after"],
             (r.get("recorded") or {}).get("feedback")) for r in recorded], run.name


def test_actions_with_keys_and_urls(sample_ledger: Path, width100: None) -> None:
    assert "step 1    NAVIGATE \"http://sample.local/deals/\"" in text_of(sample_ledger, "captcha-blocked")
    assert "step 3    KEY_PRESS \"Enter\"" in text_of(sample_ledger, "drift-loop-on")


def test_long_reasoning_is_cut_at_200_characters() -> None:
    from trajcheck.cli.timeline import render

    data = json.loads(json.dumps(CONSENT_ON))
    data["steps"] = data["steps"][:1]
    # 60 words and a last one after a blank line: 303 characters once whitespace runs fold to one space
    data["steps"][0]["reasoning"] = "word " * 60 + "\n\n  end"
    console = Console(width=100, color_system=None, file=io.StringIO())
    console.print(render(data))
    lines = [line.rstrip() for line in console.file.getvalue().splitlines()]
    why = lines[lines.index("step 1    CLICK (640, 316)") + 1:next(i for i, line in enumerate(lines)
                                                                   if line.startswith("state "))]
    assert why[0].startswith("why       ") and all(line.startswith(" " * 10) for line in why[1:])
    # the first 200 characters are 40 words and a space, then the ellipsis; "end" is cut off
    assert " ".join(line[10:] for line in why).split() == ["word"] * 40 + ["..."]


def test_an_unknown_run_is_exit_2_with_suggestions(sample_ledger: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "consent"])
    assert res.exit_code == 2
    assert res.stderr == ("error: no run 'consent' in the ledger; did you mean consent-overlay-off, "
                          "consent-overlay-on, nc-consent-recovered?\n")
    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "zzz"])
    assert (res.exit_code, res.stderr) == (2, "error: no run 'zzz' in the ledger\n")
    res = CliRunner().invoke(app, ["timeline", str(tmp_path / "nowhere"), "consent-overlay-on"])
    assert res.exit_code == 3 and res.stderr.startswith(f"error: {tmp_path / 'nowhere'}: no such ledger")
