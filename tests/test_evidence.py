"""The evidence referee (analyzers/evidence.py), page messages (analyzers/messages.py) and the authority
order of the final verdict (analyzers/referee.py)."""

from __future__ import annotations

import pytest

from trajcheck.analyzers import evidence as ev
from trajcheck.analyzers import referee, skeleton
from trajcheck.analyzers.contract import NOT_APPLICABLE, CheckResult, ContractResult
from trajcheck.analyzers.evidence import StepEvidence as S
from trajcheck.analyzers.messages import NO_MESSAGES, PageMessages, page_messages

FORM = "http://shop.test/checkout"


def pm(errors=(), successes=(), worded=None) -> PageMessages:
    """Page messages; errors read as errors by their words unless ``worded`` says otherwise."""
    return PageMessages(frozenset(errors), frozenset(successes), frozenset(errors if worded is None else worded))


def msgs(html: str):
    tree = skeleton.parse(html)
    return page_messages(tree, skeleton.page_text(tree).text)


def step(i, kind="CLICK", **kw):
    base = dict(url_before=FORM, url_after=FORM, messages_before=NO_MESSAGES, messages_after=NO_MESSAGES)
    base.update(kw)
    return S(i, kind, **base)


def done(i, **kw):
    return step(i, "DONE", **kw)


def codes(v: ev.EvidenceVerdict) -> list[str]:
    return [r.split("@")[0] for r in v.reasons]


# ---- page messages ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("html, errors, successes", [
    ('<div role="alert" class="alert alert-danger">Phone number is required</div>', 1, 0),
    ('<div class="toast show" role="status"><div class="toast-body">Settings saved</div></div>', 0, 1),
    ('<div class="toast" role="status"><div class="toast-body">Settings saved</div></div>', 0, 0),  # not shown
    ('<div class="alert alert-success" hidden>Saved</div>', 0, 0),
    ('<div class="alert alert-success d-none">Saved</div>', 0, 0),
    ('<ul class="errorlist"><li>Enter a valid date.</li></ul>', 1, 0),  # Django's form errors
    ('<input name="email" aria-invalid="true">', 1, 0),
    ('<input name="email" class="form-control"><div class="invalid-feedback">Enter an email</div>', 0, 0),
    ('<input name="email" class="form-control is-invalid"><div class="invalid-feedback">Enter an email</div>', 2, 0),
    ('<p>This field is required.</p>', 1, 0),  # page text
    ('<p>Please enter your email to subscribe.</p>', 0, 0),  # an instruction, not an error
    ('<h1>Thank you for your order!</h1>', 0, 1),
    ('<a href="/s">Saved searches</a>', 0, 0),  # a link, not a message
    ('<div role="status">Loading</div>', 0, 0),  # says neither
    ('<div id="error_explanation"><h2>1 error prohibited this user from being saved</h2></div>', 1, 0),  # Rails
    ('<div class="field_with_errors"><input name="user[email]"></div>', 1, 0),  # Rails wraps invalid fields
    ('<span class="field-validation-error">The Email field is required.</span>', 1, 0),  # ASP.NET MVC
    ('<button class="btn btn-danger">Delete</button>', 0, 0),  # a control, not a message
    ('<span class="text-danger">*</span>', 0, 0),  # a required-field marker
])
def test_page_messages(html, errors, successes):
    m = msgs(f"<html><body>{html}</body></html>")
    assert (len(m.errors), len(m.successes)) == (errors, successes), m


# ---- the rules -------------------------------------------------------------------------------------------

def test_swallowed_submit_then_done_fails():
    v = ev.decide([step(1, high_risk=True, effect=False, content_changed=False),
                   step(2, high_risk=True, effect=False, content_changed=False),
                   done(3, content_changed=False)])
    assert v.verdict == "fail"
    assert v.reasons == ("last_high_risk_no_effect@2: CLICK changed nothing, nor did any later step",)
    assert v.confidence == 0.6


def test_validation_error_after_submit_fails_even_when_the_page_moved():
    err = pm({"phone number is required"})
    v = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, url_after="http://shop.test/submit",
                        messages_after=err),
                   done(2, url_before="http://shop.test/submit", url_after="http://shop.test/submit",
                        messages_before=err, messages_after=err)])
    assert v.verdict == "fail"
    assert codes(v) == ["error_after_last_high_risk", "navigated_after_last_high_risk"]
    assert v.reasons[1].endswith("(vetoed by the error)")


def test_an_error_already_on_the_page_is_not_a_response():
    err = pm({"your trial ends soon: error in billing"})
    v = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, messages_before=err,
                        messages_after=pm(err.errors, {"saved"})), done(2, messages_before=err, messages_after=err)])
    assert v.verdict == "pass"
    assert codes(v) == ["success_after_last_high_risk"]


def test_on_a_new_page_only_worded_errors_count():
    # An error-classed element on the confirmation page whose text is not an error (a template hidden by CSS,
    # "Contact support") does not veto the navigation; "Card number is invalid" does.
    conf = "http://shop.test/orders/confirmation"
    quiet = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, url_after=conf,
                            messages_after=pm({"contact support"}, worded=())), done(2, url_before=conf,
                                                                                        url_after=conf)])
    assert quiet.verdict == "pass" and codes(quiet) == ["navigated_after_last_high_risk"]
    loud = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, url_after=conf,
                           messages_after=pm({"card number is invalid"})), done(2, url_before=conf, url_after=conf)])
    assert loud.verdict == "fail" and codes(loud)[0] == "error_after_last_high_risk"
    # On the same page, the error class alone is enough.
    same = ev.decide([step(1, high_risk=True, effect=True, content_changed=True,
                           messages_after=pm({"contact support"}, worded=())), done(2)])
    assert same.verdict == "fail"


def test_navigation_to_another_path_passes_but_a_query_echo_does_not():
    nav = ev.decide([step(1, high_risk=True, effect=True, content_changed=True,
                          url_after="http://shop.test/orders/confirmation"), done(2)])
    assert nav.verdict == "pass" and codes(nav) == ["navigated_after_last_high_risk"]
    echo = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, url_after=FORM + "?q=1#top"),
                      done(2, url_before=FORM + "?q=1#top", url_after=FORM + "?q=1#top")])
    assert echo.verdict == "unknown" and codes(echo) == ["effect_without_outcome"]


def test_recovered_failure_does_not_count():
    v = ev.decide([step(1, high_risk=True, effect=False, content_changed=False),
                   step(2, high_risk=True, effect=False, content_changed=False),
                   step(3, effect=True, content_changed=True),  # dismiss the consent box
                   step(4, high_risk=True, effect=True, content_changed=True,
                        messages_after=pm(successes={"subscribed! check your inbox"})),
                   done(5)])
    assert v.verdict == "pass"
    assert codes(v) == ["success_after_last_high_risk"]


def test_later_change_keeps_a_no_effect_verdict_from_failing():
    v = ev.decide([step(1, high_risk=True, effect=False, content_changed=False),
                   step(2, "WAIT", content_changed=True), done(3)])
    assert v.verdict == "unknown" and codes(v) == ["effect_without_outcome"]


def test_run_ending_in_a_loop_fails():
    v = ev.decide([step(1, high_risk=True, effect=True, content_changed=True),
                   step(2, "SCROLL", in_loop=True), step(3, "SCROLL", in_loop=True), done(4)])
    assert v.verdict == "fail" and "ends_in_loop" in codes(v)


@pytest.mark.parametrize("codes_, url", [(("captcha",), FORM), (("blocking_page",), FORM)])
def test_run_ending_on_a_blocking_page_fails(codes_, url):
    v = ev.decide([step(1, reward_codes=codes_), done(2, reward_codes=codes_)])
    assert v.verdict == "fail" and codes(v) == ["ends_blocked"] and v.confidence == 0.8


def test_auth_wall_at_the_end_fails_but_a_passed_login_does_not():
    login = "http://shop.test/login?next=/orders"
    wall = ev.decide([step(1, url_after=login, reward_codes=("auth_redirect",)),
                      done(2, url_before=login, url_after=login)])
    assert wall.verdict == "fail" and wall.reasons == ("ends_blocked@1: auth wall " + login,)
    passed = ev.decide([step(1, url_after=login, reward_codes=("auth_redirect",)),
                        step(2, high_risk=True, effect=True, content_changed=True, url_before=login,
                             url_after="http://shop.test/orders"),
                        done(3, url_before="http://shop.test/orders", url_after="http://shop.test/orders")])
    assert passed.verdict == "pass" and codes(passed) == ["navigated_after_last_high_risk"]


def test_done_gate_and_answer_match():
    gate = ev.decide([step(1, "WAIT"), step(2, "WAIT"), done(3, done_gate=True)])
    assert gate.verdict == "unknown" and codes(gate) == ["done_after_idle_waits"]  # -0.4 alone does not decide
    answer = ev.decide([step(1, "SCROLL"), done(2, answer_matches=True)])
    assert answer.verdict == "pass" and codes(answer) == ["answer_matches_reference"]


def test_nothing_decisive_is_unknown_with_zero_confidence():
    assert ev.decide([]) == ev.UNKNOWN
    no_dom = dict(messages_before=None, messages_after=None)
    v = ev.decide([step(1, high_risk=True, effect=True, content_changed=True, **no_dom), done(2, **no_dom)])
    assert v.verdict == "unknown" and v.confidence == 0.0
    assert v.reasons == ("effect_without_outcome@1: no DOM snapshot to read a message from",)


def test_every_code_is_weighted_and_explained():
    assert set(ev.WEIGHTS) == set(ev.MEANINGS)
    assert ev.PASS_CODES <= {c for c, w in ev.WEIGHTS.items() if w > 0}


# ---- authority: contract and judge outrank the evidence --------------------------------------------------

PASS_EV = ev.EvidenceVerdict("pass", ("success_after_last_high_risk@1: saved",), 0.7)
FAIL_EV = ev.EvidenceVerdict("fail", ("last_high_risk_no_effect@1: x",), 0.8)


def contract(verdict: str) -> ContractResult:
    return ContractResult(verdict, "c", (CheckResult("url", "u", verdict == "pass", {}),))


def judge(verdict: str) -> referee.Judge:
    return referee.Judge("m", verdict, None, 0.8, (), True)


@pytest.mark.parametrize("c, j, evidence, final, source", [
    ("pass", None, FAIL_EV, "pass", "contract"),
    ("fail", None, PASS_EV, "fail", "contract"),
    (None, "pass", FAIL_EV, "pass", "judge"),
    (None, "fail", PASS_EV, "fail", "judge"),
    ("pass", "fail", PASS_EV, "uncertain", "contract+judge"),
    (None, None, FAIL_EV, "fail", "evidence"),
    (None, None, PASS_EV, "pass", "evidence"),
    (None, None, ev.UNKNOWN, "unknown", "none"),
])
def test_authority_order(c, j, evidence, final, source):
    v = referee.decide(contract(c) if c else NOT_APPLICABLE, judge(j) if j else None, None, True, evidence)
    assert (v.final, v.source) == (final, source)
    assert v.false_claim == (final in ("fail", "uncertain"))
    assert v.false_claim_basis == (None if not v.false_claim else "evidence" if source == "evidence" else "referee")


def test_evidence_alone_is_capped_and_never_promotes_a_lesson():
    v = referee.decide(NOT_APPLICABLE, None, None, True, FAIL_EV)
    assert v.confidence == referee.EVIDENCE_MAX_CONFIDENCE == 0.6
    assert v.reason == "evidence_only" and v.lesson_promotable is False
    p = referee.decide(NOT_APPLICABLE, None, None, True, PASS_EV)
    assert p.final == "pass" and p.lesson_promotable is False and p.false_claim is False
    assert referee.decide(contract("pass"), None, None, True, FAIL_EV).lesson_promotable is True


def test_no_claim_no_false_claim():
    v = referee.decide(NOT_APPLICABLE, None, None, False, FAIL_EV)
    assert v.final == "fail" and v.false_claim is False and v.false_claim_basis is None


# ---- the benchmark's evaluator as a source (issue 20) ----------------------------------------------------

def test_evaluator_verdict_threshold():
    assert referee.evaluator_verdict(None) is None
    assert referee.evaluator_verdict(float("nan")) is None
    assert referee.evaluator_verdict(1.0) == "pass" and referee.evaluator_verdict(0.99) == "fail"
    assert referee.evaluator_verdict(0.5, pass_at=0.5) == "pass"  # partial credit (OSWorld) with a lower bar


@pytest.mark.parametrize("c, e, j, final, reason, source, basis", [
    (None, "fail", None, "fail", "evaluator_only", "evaluator", "evaluator"),
    (None, "pass", None, "pass", "evaluator_only", "evaluator", None),
    ("pass", "fail", None, "uncertain", "evaluator_disagreement", "contract+evaluator", "referee"),
    ("fail", "fail", None, "fail", "agreement", "contract+evaluator", "referee"),
    (None, "pass", "fail", "uncertain", "judge_disagreement", "evaluator+judge", "referee"),
    ("pass", "pass", "pass", "pass", "agreement", "contract+evaluator+judge", None),
])
def test_evaluator_stands_beside_the_contract(c, e, j, final, reason, source, basis):
    v = referee.decide(contract(c) if c else NOT_APPLICABLE, judge(j) if j else None, None, True, PASS_EV, e)
    assert (v.final, v.reason, v.source, v.false_claim_basis) == (final, reason, source, basis)
    if reason.endswith("disagreement"):
        assert "Do not promote" in v.lesson and v.lesson_promotable is False


def test_evaluator_outranks_the_evidence():
    v = referee.decide(NOT_APPLICABLE, None, None, True, PASS_EV, "fail")
    assert (v.final, v.source, v.false_claim, v.false_claim_basis) == ("fail", "evaluator", True, "evaluator")
