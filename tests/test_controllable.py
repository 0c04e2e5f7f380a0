"""Could the agent have avoided it (issue 51, item 2): each failure mode and decisive error controllable or
uncontrollable from its evidence; ``failures`` counts the controllable failures per arm."""

from __future__ import annotations

from typing import Any

from trajcheck.analyzers.control import of_decisive, of_failure
from trajcheck.base.reasons import Control as C

from conftest import run_json

GOAL = "Open 'My orders' in the portal and report the order that is in transit."


def test_walls_outside_the_agent_are_uncontrollable_and_an_overlay_is_not():
    assert of_failure("blocked", "captcha", "captcha at a/b", None, GOAL) == C.UNCONTROLLABLE
    assert of_failure("blocked", "blocking_page", "blocking page at a/b", None, GOAL) == C.UNCONTROLLABLE
    assert of_failure("blocked", "overlay", "overlay 'cookies' open", None, GOAL) == C.CONTROLLABLE


def test_a_sign_in_wall_is_the_agents_only_when_the_goal_gave_a_way_in():
    assert of_failure("blocked", "auth_wall", "auth wall at a/login", None, GOAL) == C.UNCONTROLLABLE
    assert of_failure("blocked", "auth_wall", "x", None, GOAL + " Log in as jdoe, password hunter2.") == \
        C.CONTROLLABLE
    assert of_failure("blocked", "auth_wall", "x", None, "Sign in with the test account and pay.") == C.CONTROLLABLE
    assert of_failure("blocked", "auth_wall", "x", None, "Log in and pay.") == C.UNCONTROLLABLE  # no way in given
    assert of_failure("blocked", "auth_wall", "x", None, None) is None  # no goal recorded: the evidence says nothing


def test_an_error_message_is_the_agents_unless_it_says_the_server_or_the_shop_failed():
    assert of_failure("app_said_no", "password is too short", "x", None, GOAL) == C.CONTROLLABLE
    for text in ("503 service unavailable", "internal server error", "too many requests, try again later",
                 "this item is out of stock", "sorry, sold out"):
        assert of_failure("app_said_no", text, text, None, GOAL) == C.UNCONTROLLABLE, text
        assert of_decisive("ignored_message", f"after CLICK the page said: {text}", None, None, GOAL) == \
            C.UNCONTROLLABLE
    assert of_decisive("ignored_message", "after CLICK the page said: email is invalid", None, None, GOAL) == \
        C.CONTROLLABLE


def test_what_the_agent_chose_is_controllable_and_a_damaged_run_is_not():
    for mode in ("dead_action", "looped", "no_answer", "gave_up", "wrong_result"):
        assert of_failure(mode, "x", "x", None, GOAL) == C.CONTROLLABLE
        assert of_failure(mode, "x", "x", "infrastructure", GOAL) == C.UNCONTROLLABLE
        assert of_failure(mode, "x", "x", "pre_satisfied", GOAL) == C.CONTROLLABLE  # a passing run's damage
    for kind in ("dead_action", "loop_start", "stall"):
        assert of_decisive(kind, "x", None, None, GOAL) == C.CONTROLLABLE
        assert of_decisive(kind, "x", None, "harness_killed", GOAL) == C.UNCONTROLLABLE
    assert of_decisive("blocked", "x", "captcha", None, GOAL) == C.UNCONTROLLABLE


def test_undetermined_is_neither():
    assert of_failure("not_determined", "no_verdict", "x", None, GOAL) is None
    assert of_failure(None, None, None, None, GOAL) is None
    assert of_decisive("not_determined", "x", None, None, GOAL) is None
    assert of_decisive(None, None, None, None, GOAL) is None


#: The control of each failing sample run's failure mode and decisive error, read from its steps and task.
EXPECTED = {
    "captcha-blocked": ("uncontrollable", "uncontrollable"),  # a CAPTCHA
    "nc-signin-gave-up": ("uncontrollable", "uncontrollable"),  # a sign-in wall; the goal gives no credentials
    "consent-overlay-off": ("controllable", "controllable"),  # a cookie banner the -on arm dismissed
    "nc-server-validation": ("controllable", "controllable"),  # 'password is too short', not acted on
    "nc-inbox-read": (None, None),
    "sequencer-near-miss": ("controllable", "controllable"),  # a wrong grid: the agent's click on cell 10 (step 3)
}


def _runs(ledger: Any) -> dict[str, dict[str, Any]]:
    rows = run_json("query", str(ledger), "select run_id, failure_mode, failure_control, decisive_control from runs")
    return {r["run_id"]: r for r in rows}


def test_controllable_or_not_on_every_blocked_sample_run(sample_ledger):
    runs = _runs(sample_ledger)
    for run_id, want in EXPECTED.items():
        assert (runs[run_id]["failure_control"], runs[run_id]["decisive_control"]) == want, run_id
    blocked = {k for k, r in runs.items() if r["failure_mode"] == "blocked"}
    assert blocked == {"captcha-blocked", "nc-signin-gave-up", "consent-overlay-off"}
    rest = {k for k, r in runs.items() if r["failure_mode"] and k not in EXPECTED}
    assert rest and all(runs[k]["failure_control"] == "controllable" for k in rest)  # dead actions and loops
    assert all(r["failure_control"] is None for r in runs.values() if r["failure_mode"] is None)


def test_failures_reports_the_controllable_failure_rate_per_arm(sample_ledger):
    data = run_json("failures", str(sample_ledger), "--by", "config.perceptual_verifier")
    arms = {a["arm"]: a for a in data["arms"]}
    # the uncontrollable failures (captcha-blocked, nc-signin-gave-up) count neither way: out of the denominator
    assert {k: (a["controllable"]["k"], a["controllable"]["n"], a["uncontrollable"]) for k, a in arms.items()} == {
        "false": (5, 5, 0), "true": (2, 13, 1), "(null)": (4, 8, 1)}
    everyone = run_json("failures", str(sample_ledger))["arms"][0]
    assert [(m["mode"], m["count"], m["controllable"]) for m in everyone["modes"]] == [
        ("blocked", 3, 1), ("app_said_no", 1, 1), ("dead_action", 6, 6), ("looped", 2, 2), ("wrong_result", 1, 1),
        ("not_determined", 1, 0)]
