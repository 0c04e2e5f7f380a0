"""Failure modes (issue 41): the decisive cause of each run that did not pass, from its evidence.

The analyzer is tested mode by mode on its inputs; the sample runs' modes against what their labelled steps
show; ``trajcheck failures`` for its counts, run ids and byte-identical output on a second scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajcheck.analyzers.failuremodes import NONE, FailureFacts, blocking_page, classify, error_texts, normalise
from trajcheck.base.reasons import FailureMode as M
from trajcheck.cli.main import app

from conftest import copy_run, read_steps, run_json, write_steps

runner = CliRunner()


def facts(verdict: str = "fail", reasons: tuple[str, ...] = (), **kw: object) -> FailureFacts:
    base: dict[str, object] = {"verdict": verdict, "verdict_reason": "evidence_only", "claimed": True,
                               "evidence_reasons": reasons, "last_step": 4}
    base.update(kw)
    return FailureFacts(**base)  # type: ignore[arg-type]


# ---- the analyzer, mode by mode -------------------------------------------------------------------------


def test_a_passing_run_and_an_unknown_run_that_claimed_nothing_get_no_mode():
    assert classify(facts("pass", ("ends_blocked@2: captcha",))) == NONE
    assert classify(facts("unknown", ("ends_blocked@2: captcha",), claimed=False)) == NONE
    assert classify(facts("unknown", ("ends_blocked@2: captcha",), claimed=True)).mode == M.BLOCKED
    assert classify(facts("uncertain", ("ends_blocked@2: captcha",), claimed=False)).mode == M.BLOCKED


def test_blocked_names_the_blocker_and_its_page_and_wins_over_every_other_cause():
    f = classify(facts(reasons=("last_high_risk_no_effect@2: CLICK changed nothing, nor did any later step",
                                "ends_blocked@3: blocking_page, captcha", "ends_in_loop@3: CLICK repeated"),
                       urls={3: "https://shop.example/verify?x=1#top"}, no_answer=True))
    assert (f.mode, f.detail, f.step, f.evidence) == ("blocked", "captcha", 3, "captcha at shop.example/verify")
    assert blocking_page(f.evidence) == "shop.example/verify"
    auth = classify(facts(reasons=("ends_blocked@1: auth wall https://portal.example/login?next=%2Forders",)))
    assert (auth.detail, auth.evidence) == ("auth_wall", "auth wall at portal.example/login")
    page = classify(facts(reasons=("ends_blocked@5: blocking_page",), urls={5: "https://a.example/denied"}))
    assert (page.detail, page.evidence) == ("blocking_page", "blocking page at a.example/denied")


def test_the_app_said_no_with_its_error_normalised():
    assert normalise("Password is too short") == normalise("  password is   too short. ") == "password is too short"
    assert normalise("1 error prohibited this account from being saved: Name can't be blank!") == \
        "name can't be blank"
    f = classify(facts(reasons=("error_after_last_high_risk@7: invalid field: password; Password is too short.",
                                "last_high_risk_no_effect@7: CLICK changed nothing, nor did any later step")))
    assert (f.mode, f.detail, f.step) == ("app_said_no", "password is too short", 7)
    # read from the screen: the same text, the same detail; a clipped text comes last
    assert error_texts("screen text: password is too short.; email is requi…") == ["password is too short",
                                                                                 "email is requi"]


def test_a_dead_action_is_the_cause_of_the_loop_after_it():
    f = classify(facts(reasons=("last_high_risk_no_effect@5: CLICK changed nothing, nor did any later step",
                                "ends_in_loop@5: CLICK repeated on an unchanging screen"), no_answer=True))
    assert (f.mode, f.detail, f.step) == ("dead_action", "CLICK", 5)


@pytest.mark.parametrize("reasons, detail, step", [
    (("ends_in_loop@6: CLICK repeated", "no_net_progress@3: ends on the screen after step 1",
      "done_after_idle_waits@8: no frame change"), "drift_loop", 6),
    (("done_after_idle_waits@8: no frame change", "no_net_progress@3: ends on the screen after step 1"),
     "no_net_progress", 3),
    (("effect_without_outcome@3: no message and no navigation", "done_after_idle_waits@6: no frame change"),
     "idle_waits", 6),
])
def test_looped_in_its_fixed_tie_order(reasons, detail, step):
    f = classify(facts(reasons=reasons, no_answer=True))
    assert (f.mode, f.detail, f.step) == ("looped", detail, step)


def test_no_answer_says_how_the_run_ended():
    f = classify(facts(reasons=("effect_without_outcome@3: no DOM snapshot",), no_answer=True,
                       executor_error="TimeoutError: locator.click", claimed=False))
    assert (f.mode, f.detail, f.step, f.evidence) == ("no_answer", "executor_error", 4,
                                                      "executor error: TimeoutError: locator.click")
    cut = classify(facts(no_answer=True, claimed=False))
    assert (cut.mode, cut.detail) == ("no_answer", "cut_off")


def test_gave_up_only_when_no_evidence_names_a_cause():
    f = classify(facts(claimed=False, gave_up="message_admits_failure", gave_up_evidence="refusal: I won't",
                       done_step=3, failed_checks=(("url", "url_matches", "{}"),)))
    assert (f.mode, f.detail, f.step, f.evidence) == ("gave_up", "refusal", 3, "refusal: I won't")
    assert classify(facts(claimed=False, gave_up="agent_reported_failure", gave_up_evidence="infeasible",
                          reasons=("ends_blocked@2: captcha",))).mode == "blocked"


def test_wrong_result_takes_the_first_failed_check_by_name_then_evaluator_judge_answer():
    f = classify(facts(failed_checks=(("z check", "text_present", '{"found": false}'),
                                      ("a check", "url_matches", '{"url": "x"}')), done_step=5, evaluator="fail"))
    assert (f.mode, f.detail, f.step, f.evidence) == ("wrong_result", "url_matches", 5,
                                                      'contract check a check failed: {"url": "x"}')
    assert classify(facts(evaluator="fail", outcome_score=0.0)).detail == "evaluator"
    assert classify(facts(judge="fail", judge_model="m")).detail == "judge"
    assert classify(facts(answer_matches=False)).detail == "answer"


def test_missing_evidence_alone_is_not_determined():
    # a contract whose check lacked its DOM (undecided: never among the failed checks), an effect with no outcome
    f = classify(facts("uncertain", ("effect_without_outcome@2: no DOM snapshot to read a message from",),
                       verdict_reason="contract_undecided"))
    assert (f.mode, f.detail, f.step) == ("not_determined", "contract_undecided", None)
    assert f.evidence == "effect_without_outcome@2: no DOM snapshot to read a message from"


def test_the_same_facts_give_the_same_mode_whatever_the_order_of_their_parts():
    a = facts(reasons=("error_after_last_high_risk@4: b is wrong; a is invalid",),
              failed_checks=(("x", "t", "1"), ("y", "u", "2")))
    b = facts(reasons=("error_after_last_high_risk@4: a is invalid; b is wrong",),
              failed_checks=(("y", "u", "2"), ("x", "t", "1")))
    assert classify(a).detail == classify(b).detail == "a is invalid"


# ---- the sample runs -------------------------------------------------------------------------------------

#: Each sample run that did not pass, its mode and detail, as its labelled steps show it (docs/failures.md).
EXPECTED = {
    "captcha-blocked": ("blocked", "captcha"),
    "nc-signin-gave-up": ("blocked", "auth_wall"),
    "nc-server-validation": ("app_said_no", "password is too short (minimum is 8 characters)"),
    "consent-overlay-off": ("blocked", "overlay"),  # the cookie banner's modal disables the page
    "drift-loop-off": ("dead_action", "CLICK"),
    "nc-pay-loop": ("dead_action", "CLICK"),
    "nc-swallowed-send": ("dead_action", "CLICK"),
    "offscreen-modal-off": ("dead_action", "CLICK"),
    "terms-checkbox-off": ("dead_action", "CLICK"),
    "validation-flash-off": ("dead_action", "CLICK"),
    "menu-toggle-aimless": ("looped", "no_net_progress"),
    "ticker-dead-send": ("looped", "idle_waits"),
    "sequencer-near-miss": ("wrong_result", "grid"),
    "nc-inbox-read": ("not_determined", "no_verdict"),
}

#: The labelled step kinds each mode's step may have (sample_runs/labels.json).
STEP_KINDS = {
    # the CAPTCHA run ends on its blocking page (step 3 waits on it); the cookie banner absorbs the click
    "blocked": {"wait", "auth_redirect", "click_absorbed_by_overlay"},
    "app_said_no": {"server_validation_error"},
    "dead_action": {"click_absorbed_by_overlay", "drift_loop_dead_button", "click_absorbed_by_transparent_widget",
                    "modal_mounted_offscreen", "click_on_disabled_button", "validation_flash"},
    "looped": {"menu_toggle", "done"},
    "wrong_result": {"done"},
}


def _runs(ledger: Path) -> dict[str, dict]:
    rows = run_json("query", str(ledger), "select run_id, eval_final_verdict, failure_mode, failure_detail, "
                    "failure_step, failure_evidence from runs")
    return {r["run_id"]: r for r in rows}


def test_each_sample_run_that_did_not_pass_has_the_mode_its_steps_show(sample_ledger, labels):
    runs = _runs(sample_ledger)
    got = {k: (r["failure_mode"], r["failure_detail"]) for k, r in runs.items() if r["failure_mode"]}
    assert got == EXPECTED
    for run_id, label in labels.items():
        r = runs[run_id]
        if label["outcome"] == "fail":  # every labelled failure is in a mode
            assert r["failure_mode"] is not None, run_id
        if r["failure_step"] is not None and r["failure_mode"] in STEP_KINDS:
            step = label["steps"][str(r["failure_step"])]
            assert step["kind"] in STEP_KINDS[r["failure_mode"]], (run_id, step)
            if r["failure_mode"] == "dead_action":  # the step it rests on had no effect, by its label
                assert step["effect"] is False, run_id
    # the modes rest on their evidence, named in the evidence string
    assert runs["captcha-blocked"]["failure_evidence"] == "captcha at sample.local/deals"
    assert "password is too short" in runs["nc-server-validation"]["failure_evidence"]


def _score(src: list[Path], out: Path) -> None:
    res = runner.invoke(app, ["score", *map(str, src), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output


def test_no_answer_and_gave_up_on_scored_runs(tmp_path):
    samples = Path(__file__).resolve().parent.parent / "sample_runs"
    cut = copy_run(samples / "nc-inbox-read", tmp_path / "runs" / "cut-off")
    steps = read_steps(cut)
    steps[-1]["executor"] = {"ok": False, "error": "TimeoutError: page.click: Timeout 30000ms exceeded"}
    steps[-1]["action"] = {"type": "CLICK", "x": 10, "y": 10}
    write_steps(cut, steps)
    quit_ = copy_run(samples / "nc-inbox-read", tmp_path / "runs" / "quit")
    steps = read_steps(quit_)
    steps[-1]["action"] = {"type": "DONE", "text": "I could not complete the task: the inbox is empty."}
    steps[-1].pop("semantic", None)
    steps[-1]["reasoning"] = "I could not complete the task."
    write_steps(quit_, steps)
    for d, rid in ((cut, "cut-off"), (quit_, "quit")):
        meta = json.loads((d / "run.json").read_text())
        meta["run_id"] = rid
        meta.pop("outcome")  # no recorded status "done": what the steps say is all there is
        meta["ends"] = "answer"  # the harness ends runs only by an answer or a limit: the no-answer rule applies
        if rid == "quit":
            meta["outcome"] = {"score": 0.0}
        (d / "run.json").write_text(json.dumps(meta))
    _score([tmp_path / "runs"], tmp_path / "L")
    runs = _runs(tmp_path / "L")
    assert (runs["cut-off"]["failure_mode"], runs["cut-off"]["failure_detail"]) == ("no_answer", "executor_error")
    assert "Timeout 30000ms" in runs["cut-off"]["failure_evidence"]
    # the give-up failed by the benchmark's evaluator: the agent's admission names the mode, no evidence does
    assert (runs["quit"]["eval_final_verdict"], runs["quit"]["failure_mode"]) == ("fail", "gave_up")
    assert runs["quit"]["failure_detail"] == "agent_could_not"


# ---- trajcheck failures ------------------------------------------------------------------------------------


def test_failures_counts_modes_per_arm_with_their_runs(sample_ledger):
    data = run_json("failures", str(sample_ledger), "--by", "config.perceptual_verifier")
    arms = {a["arm"]: a for a in data["arms"]}
    off = arms["false"]
    assert (off["runs"], off["failed"]) == (5, 5)  # the five verifier-off runs all failed
    assert [(m["mode"], m["runs"]) for m in off["modes"]] == [
        ("blocked", ["consent-overlay-off"]),
        ("dead_action", ["drift-loop-off", "offscreen-modal-off", "terms-checkbox-off", "validation-flash-off"])]
    dead = off["modes"][1]
    assert dead["share"]["rate"] == 0.8 and dead["details"] == [{"detail": "CLICK", "count": 4}]
    assert dead["example"]["run_id"] == dead["runs"][0] and dead["example"]["evidence"]
    assert 0 <= dead["rate"]["low"] <= dead["rate"]["rate"] <= dead["rate"]["high"] <= 1
    everyone = {r for a in data["arms"] for m in a["modes"] for r in m["runs"]}
    assert everyone == set(EXPECTED)
    assert arms["(null)"]["errors"] == [{"text": "password is too short (minimum is 8 characters)", "count": 1}]
    assert arms["true"]["blocking_pages"] == [{"page": "sample.local/deals", "count": 1}]
    assert data["modes"] == [str(m) for m in M]


def test_failures_where_and_a_bad_by_or_where(sample_ledger):
    data = run_json("failures", str(sample_ledger), "--where", "task_id = 'deals-search'")
    assert [(m["mode"], m["runs"]) for m in data["arms"][0]["modes"]] == [("blocked", ["captcha-blocked"])]
    for args in (["--by", "no_such_column"], ["--where", "no_such_column = 1"]):
        res = runner.invoke(app, ["failures", str(sample_ledger), *args])
        assert res.exit_code == 2 and res.stdout == "", res.output


@pytest.mark.slow
def test_a_second_scoring_gives_byte_identical_failures_output(tmp_path, samples):
    outputs = []
    for n in (1, 2):
        _score([samples], tmp_path / f"L{n}")
        outputs.append([runner.invoke(app, ["failures", str(tmp_path / f"L{n}"), "--by", "config.perceptual_verifier",
                                            "-f", fmt]).stdout for fmt in ("json", "csv", "md", "table")])
    assert outputs[0] == outputs[1]
    assert all(outputs[0]) and '"runs": [' in outputs[0][0]
    assert outputs[0][1].splitlines()[0].startswith("arm,mode,runs,controllable,share_of_failures")
    assert outputs[0][2].startswith("## Failure modes by config.perceptual_verifier")


def test_markdown_output_keeps_log_text_as_data(tmp_path, samples):
    from trajcheck.cli.failures import to_markdown

    data = {"by": None, "arms": [{"arm": "a|b", "modes": [{
        "mode": "app_said_no", "count": 1, "share": {"rate": 1.0, "low": 0.2, "high": 1.0},
        "rate": {"rate": 1.0, "low": 0.2, "high": 1.0}, "details": [{"detail": "x | y\n<script>", "count": 1}],
        "example": {"run_id": "r", "step": 1, "evidence": "`code` | pipe"}, "controllable": 1}], "errors": [],
        "blocking_pages": [], "controllable": {"k": 1, "n": 1, "rate": 1.0, "low": 0.2, "high": 1.0},
        "uncontrollable": 0}]}
    text = to_markdown(data)
    assert "x \\| y &lt;script>" in text and "\\`code\\` \\| pipe" in text and "<script>" not in text


# ---- check and compare ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_check_gates_a_failure_mode(sample_ledger):
    res = runner.invoke(app, ["check", str(sample_ledger), "--max-mode-rate", "dead_action=0.1",
                              "--max-mode-rate", "blocked=0.2", "-f", "json"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    rules = {r["mode"]: r for r in data["rules"]}
    assert rules["dead_action"]["rule"] == "max-mode-rate" and not rules["dead_action"]["passed"]
    assert rules["dead_action"]["overall"]["value"] == pytest.approx(6 / 28, abs=1e-6)  # 6 of the 28 runs
    assert rules["blocked"]["passed"] and rules["blocked"]["overall"]["value"] == pytest.approx(3 / 28, abs=1e-6)
    assert runner.invoke(app, ["check", str(sample_ledger), "--max-mode-rate", "blocked=0.2"]).exit_code == 0
    for bad in ("nosuchmode=0.1", "blocked", "blocked=2"):
        res = runner.invoke(app, ["check", str(sample_ledger), "--max-mode-rate", bad])
        assert res.exit_code == 2 and "--max-mode-rate" in res.stderr, res.output


def test_compare_shows_the_modes_whose_rate_changed_with_a_paired_test(sample_ledger):
    data = run_json("compare", str(sample_ledger), "--by", "config.perceptual_verifier")
    changes = {c["mode"]: c for c in data["failure_modes"]}
    dead = changes["dead_action"]
    # four verifier-off runs clicked a dead target; their verifier-on partners did not
    assert (dead["baseline"], dead["arm"], dead["method"], dead["pairs"]) == ("false", "true", "newcombe_paired", 5)
    assert (dead["only_baseline"], dead["only_arm"], dead["difference"]) == (4, 0, -0.8)
    assert dead["mcnemar_p"] == 0.125 and dead["high"] < 0
    assert "app_said_no" not in changes  # no run of either arm is in it: no change


def test_mode_changes_between_unpaired_arms():
    from trajcheck.queries.failuremodes import mode_changes

    runs = [("a", ("t1", None), "blocked"), ("a", ("t2", None), None), ("b", ("t3", None), None),
            ("b", ("t4", None), None)]
    (only,) = mode_changes("a", "b", runs)
    assert (only.mode, only.paired, only.difference, only.mcnemar_p) == ("blocked", False, -0.5, None)
    assert only.low is not None and only.low < -0.5 < only.high


# ---- the report ------------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_report_shows_failure_modes_per_arm_linking_to_their_runs_in_chromium(sample_ledger, tmp_path):
    from test_report_export import ARGS, CHROMIUM, _browser

    res = runner.invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "rep"), "--max-runs", "2"])
    assert res.exit_code == 0, res.output
    want = run_json("failures", str(sample_ledger), "--by", "config.perceptual_verifier")
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((tmp_path / "rep" / "index.html").as_uri())
        page.wait_for_load_state("load")
        assert page.locator("h2#failure-modes").is_visible()
        arms = page.locator("h3.failure-arm").evaluate_all("hs => hs.map(h => h.dataset.arm)")
        assert arms == [a["arm"] for a in want["arms"]]
        tables = page.locator("table.failures")
        for t, arm in enumerate(want["arms"]):
            shown = tables.nth(t).locator("tbody tr").evaluate_all(
                "rs => rs.map(r => [r.dataset.mode, [...r.querySelectorAll('td.runs a')].map(a => a.textContent)])")
            assert shown == [[m["mode"], m["runs"]] for m in arm["modes"]]
        # each mode links to its runs' pages: follow the blocked link of the verifier-off arm
        link = page.locator('table.failures tr[data-mode="blocked"] td.runs a', has_text="consent-overlay-off")
        link.first.click()
        page.wait_for_load_state("load")
        assert "consent-overlay-off" in page.title()
        # the run's page says its mode, the step it rests on and its evidence
        assert page.locator("p.failure-mode").text_content().startswith(
            "Failure mode: blocked (overlay) at step 1: overlay 'We use cookies' open")
        assert errors == []
        browser.close()


def test_a_dead_action_under_a_modal_overlay_is_blocked_by_it():
    from selectolax.lexbor import LexborHTMLParser

    from trajcheck.analyzers.overlays import modal_overlay

    page = ('<html><body><button id=go data-bbox="10 10 100 30">Go</button>{}</body></html>')
    banner = ('<div role="dialog" aria-modal="true" aria-labelledby="t" data-bbox="800 500 300 200">'
              '<h2 id="t">We use cookies</h2><button data-bbox="820 600 100 30">Accept</button></div>')
    assert modal_overlay(LexborHTMLParser(page.format(banner)), (50, 20)) == "We use cookies"
    assert modal_overlay(LexborHTMLParser(page.format(banner)), (850, 610)) is None  # a click on the overlay
    hidden = banner.replace('aria-modal="true"', 'aria-modal="true" aria-hidden="true"')
    assert modal_overlay(LexborHTMLParser(page.format(hidden)), (50, 20)) is None
    undrawn = banner.replace(' data-bbox="800 500 300 200"', "")  # mounted, never drawn (boxes recorded)
    assert modal_overlay(LexborHTMLParser(page.format(undrawn)), (50, 20)) is None
    no_boxes = '<html><body><button>Go</button><dialog open aria-label="Sign up now">x</dialog></body></html>'
    assert modal_overlay(LexborHTMLParser(no_boxes), None) == "Sign up now"
    assert modal_overlay(None, (1, 1)) is None
    odd = banner.replace('aria-labelledby="t"', 'aria-labelledby="1t \'x"').replace('id="t"', 'id="1t"')
    assert modal_overlay(LexborHTMLParser(page.format(odd)), (50, 20)) == "We use cookies"
    blank = banner.replace('aria-labelledby="t"', 'aria-labelledby=" "')
    assert modal_overlay(LexborHTMLParser(page.format(blank)), (50, 20)) == "We use cookies Accept"
    f = classify(facts(reasons=("last_high_risk_no_effect@1: CLICK changed nothing, nor did any later step",),
                       overlays={1: "We use cookies"}))
    assert (f.mode, f.detail, f.step) == ("blocked", "overlay", 1)
    assert f.evidence == "overlay 'We use cookies' open: CLICK changed nothing, nor did any later step"
    # an overlay before another step than the dead action's blocks nothing
    assert classify(facts(reasons=("last_high_risk_no_effect@2: CLICK changed nothing",),
                          overlays={1: "We use cookies"})).mode == "dead_action"


@pytest.mark.slow
def test_scored_without_contracts_evaluator_or_judge_the_evidence_gives_the_same_modes(tmp_path, samples, labels):
    """The held-out check's setting: no contract, no benchmark score, no judge; the modes come from the evidence
    alone. Every labelled failure the evidence can see keeps its mode (sequencer-near-miss's wrong grid shows only
    to its contract: on evidence it passes)."""
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(samples, runs, ignore=shutil.ignore_patterns("contract.json", "recorder"))
    for meta_path in runs.glob("*/run.json"):
        meta = json.loads(meta_path.read_text())
        meta["outcome"] = {k: v for k, v in (meta.get("outcome") or {}).items() if k not in ("score", "judge")}
        meta_path.write_text(json.dumps(meta))
    _score([runs], tmp_path / "L")
    got = {k: (r["failure_mode"], r["failure_detail"]) for k, r in _runs(tmp_path / "L").items() if r["failure_mode"]}
    for run_id, label in labels.items():
        if label["outcome"] == "fail" and run_id != "sequencer-near-miss":
            assert got[run_id] == EXPECTED[run_id], run_id
    # a run that passed by its contract but claims success with no decisive evidence left: not determined
    assert got["drift-loop-on"] == ("not_determined", "no_verdict")


def test_log_text_reaches_no_terminal_as_a_control_code():
    f = classify(facts(reasons=("error_after_last_high_risk@2: \x1b[31mPassword\x07 is too short\x1b[0m",)))
    assert "\x1b" not in f.detail and "\x1b" not in f.evidence and "\x07" not in f.evidence
    assert f.detail == "[31mpassword is too short [0m"


def test_a_ledger_scored_before_failure_modes_is_said_not_miscounted():
    v2 = Path(__file__).resolve().parent / "fixtures" / "ledger_v2"
    res = runner.invoke(app, ["failures", str(v2), "-f", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["runs_scored_before_failure_modes"] == 1
    assert "scored before failure modes existed" in res.stderr
    res = runner.invoke(app, ["check", str(v2), "--max-mode-rate", "blocked=0.1"])
    assert res.exit_code == 2 and "trajcheck score" in res.stderr, res.output
