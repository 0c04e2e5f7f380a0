"""The evidence reward scorer: each category and each acceptance criterion of the seed."""

import pytest

from trajcheck.analyzers.reward import RewardInput, blocking_signal, classify_error, is_auth_redirect, score_step


def inp(**kw):
    base = dict(action_type="CLICK", signature="CLICK|@10,10", frames_present=True, executor_ok=True,
                url_before="https://shop/cart", url_after="https://shop/cart")
    base.update(kw)
    return RewardInput(**base)


def test_same_input_same_output():
    a = inp(meaningful_change=True, effect=True)
    assert score_step(a) == score_step(a)


def test_contract_pass_dominates_every_heuristic():
    r = score_step(inp(contract_passed=True, contract_name="order-placed", effect=False, executor_ok=False,
                       executor_error="Timeout", loop_position=3))
    assert r.klass == "strong_positive" and r.score == 1.0 and r.reasons == ("contract_passed: order-placed",)
    r = score_step(inp(contract_passed=False, meaningful_change=True, effect=True))
    assert r.klass == "negative"


def test_page_change_is_weak_positive_and_expected_state_is_strong():
    r = score_step(inp(meaningful_change=True, something_changed=True))
    assert r.klass == "weak_positive" and "page_changed" in r.reasons
    r = score_step(inp(meaningful_change=True, expected_state_reached=True))
    assert r.klass == "strong_positive" and "expected_state_reached" in r.reasons
    r = score_step(inp(action_type="DONE", answer_matches=True))
    assert r.klass == "strong_positive" and "expected_data_extracted" in r.reasons


@pytest.mark.parametrize("msg,code", [
    ("Error: stale element reference: element is not attached to the page document", "executor_stale_ref"),
    ("TimeoutError: locator.click: Timeout 5000ms exceeded.", "executor_timeout"),
    ("ValueError: Could not find element with bid \"207\"", "executor_not_found"),
    ("Something odd happened", "executor_error"),
])
def test_executor_errors_are_classified_negative(msg, code):
    assert classify_error(msg)[0] == code
    r = score_step(inp(executor_ok=False, executor_error=msg))
    assert r.klass == "negative" and r.reasons[0].startswith(code + ":")


@pytest.mark.parametrize("before,after,expected", [
    ("https://shop/account", "https://shop/login?next=/account", True),
    ("https://shop/account", "https://auth.shop/signin", True),
    ("https://shop/cart", "https://shop/cart?next=2", False),
    ("https://shop/login", "https://shop/login?error=1", False),
    ("https://shop/a", "https://shop/blog/how-to-login-faster", False),
    # Django keeps users and groups under /admin/auth/: not a wall (issue 12)
    ("http://x/admin/", "http://x/admin/auth/group/", False),
    ("http://x/admin/auth/group/", "http://x/admin/auth/user/", False),
    ("http://x/admin/", "http://x/admin/login/?next=/admin/", True),
    ("http://x/", "http://x/auth?next=/", True),  # an auth area with a redirect parameter
    ("http://x/", "http://x/users/sign_in", True),
    ("http://x/", "http://x/wp-login.php?redirect_to=x", True),
    ("http://x/", "http://x/oauth/authorize?client_id=1", True),
])
def test_auth_redirect(before, after, expected):
    assert is_auth_redirect(before, after) is expected


@pytest.mark.parametrize("after,form,expected", [
    ("http://x/orders", True, True),  # the page asks for a password: a sign-in wall whatever its URL
    ("http://x/orders", False, False),
    ("http://x/signup", True, False),  # the agent went there to register
    ("http://x/settings/password", True, False),
    ("http://x/admin/auth/group/", None, False),
])
def test_auth_redirect_by_login_form(after, form, expected):
    assert is_auth_redirect("http://x/", after, form) is expected


def test_login_form_is_one_visible_password_field():
    from selectolax.lexbor import LexborHTMLParser

    from trajcheck.analyzers.messages import login_form
    assert login_form(LexborHTMLParser('<form><input name=u><input type="PASSWORD" name=p></form>'))
    assert not login_form(LexborHTMLParser('<input type=password><input type=password>'))  # registration
    assert not login_form(LexborHTMLParser('<div hidden><input type=password></div>'))
    assert not login_form(LexborHTMLParser('<p>no form</p>'))


def test_auth_redirect_is_negative():
    r = score_step(inp(url_after="https://shop/login?next=/cart", meaningful_change=True))
    assert r.klass == "negative" and any(c.startswith("auth_redirect:") for c in r.reasons)


@pytest.mark.parametrize("title,text,kind", [
    ("Just a moment...", "Checking your browser before accessing", "blocking_page"),
    ("Access Denied", "", "blocking_page"),
    ("Security check", "Please verify you are human to continue", "captcha"),
    ("Shop", "I'm not a robot", "captcha"),
    ("Shop", "Your cart has 2 items", None),
])
def test_blocking_and_captcha(title, text, kind):
    assert blocking_signal(title, text) == kind
    if kind:
        r = score_step(inp(page_title=title, page_text=text, meaningful_change=True))
        assert r.klass == "negative" and r.reasons[0].startswith(kind)


def test_repeated_no_progress_is_penalized():
    first = score_step(inp(action_type="WAIT", new_information=False))
    assert first.klass == "negative" and "repeated_observation" in first.reasons
    loop = score_step(inp(loop_position=3, effect=False, something_changed=False))
    assert loop.klass == "negative" and "drift_loop: repetition 3" in loop.reasons


def test_same_failed_action_repeated_is_worse_than_the_first_failure():
    once = score_step(inp(executor_ok=False, executor_error="element not found"))
    twice = score_step(inp(executor_ok=False, executor_error="element not found",
                           repeats_failed_action=True))
    assert twice.score < once.score and any(c.startswith("repeated_failed_action") for c in twice.reasons)


def test_failed_action_then_fresh_read_scores_higher_than_repeating_it():
    """The seed's integration case."""
    failure = "Error: stale element reference"
    fresh_read = score_step(inp(action_type="READ_PAGE", signature="READ_PAGE", new_information=True,
                                previous_failure_kind="executor_stale_ref"))
    repeat = score_step(inp(executor_ok=False, executor_error=failure, previous_failure_kind="executor_stale_ref",
                            repeats_failed_action=True))
    assert fresh_read.score > repeat.score
    assert fresh_read.klass == "weak_positive" and "fresh_read_after_failure" in fresh_read.reasons
    assert repeat.klass == "negative"


def test_destructive_action_without_confirmation_is_hard_negative_when_required():
    kw = dict(reasoning="Click Delete project to remove it", meaningful_change=True)
    assert score_step(inp(require_confirmation=True, **kw)).klass == "hard_negative"
    assert score_step(inp(require_confirmation=False, **kw)).klass != "hard_negative"
    assert score_step(inp(require_confirmation=True, confirmed_before=True, **kw)).klass != "hard_negative"
    confirm = score_step(inp(require_confirmation=True, reasoning="Click Confirm delete in the dialog",
                             meaningful_change=True))
    assert confirm.klass != "hard_negative"


def test_missing_evidence_lowers_confidence_and_never_raises():
    full = score_step(inp(meaningful_change=True, semantic_known=True))
    bare = score_step(RewardInput(action_type="CLICK", signature="CLICK"))
    assert bare.confidence < full.confidence
    assert bare.klass == "neutral" and bare.reasons == ("no_signal",)
    for f in ("frames_present", "executor_ok"):
        less = score_step(inp(meaningful_change=True, **{f: False if f == "frames_present" else None}))
        assert less.confidence < score_step(inp(meaningful_change=True)).confidence


def test_no_observed_effect_and_done_gate():
    assert "no_observed_effect" in score_step(inp(effect=False)).reasons
    r = score_step(inp(action_type="DONE", done_gate=True))
    assert r.klass == "negative" and "no_observed_delta_after_waits" in r.reasons


def test_scores_are_bounded():
    r = score_step(inp(executor_ok=False, executor_error="timeout", page_title="Access denied", loop_position=4,
                       effect=False, url_after="https://shop/login?next=/", prediction_held=False,
                       repeats_failed_action=True))
    assert -1.0 <= r.score <= 1.0 and 0.0 <= r.confidence <= 1.0


# -- the weights are written once --------------------------------------------------------------------------------

def _table_weights(text: str, code_column: int, weight_column: int) -> dict[str, float]:
    """Each row's code (backticks stripped) -> its weight, from a Markdown table whose weight column holds
    ``+0.4``, ``-0.3`` or ``-0.3 more``."""
    import re

    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) <= max(code_column, weight_column):
            continue
        code, weight = cells[code_column].strip("`").split(":")[0], cells[weight_column]
        m = re.fullmatch(r"([+-]?\d+(?:\.\d+)?)(?: more)?", weight)
        if m and re.fullmatch(r"[a-z_]+", code):
            out[code] = float(m.group(1))
    return out


def test_each_reward_weight_is_one_table_entry_and_every_table_shows_it():
    """analyzers/reward.py WEIGHTS is the one place a reward weight is written: its docstring table and
    docs/reward.md's show the same weight for every code, and a weight changed in one place fails here."""
    from pathlib import Path

    from trajcheck.analyzers import progress, reward
    from trajcheck.base.reasons import RewardCode

    docs = (Path(__file__).resolve().parent.parent / "docs" / "reward.md").read_text()
    expected = {str(k): v for k, v in reward.WEIGHTS.items()}
    assert _table_weights(reward.__doc__ or "", 0, 1) == expected
    assert {k: v for k, v in _table_weights(docs, 1, 2).items()} == expected
    assert set(reward.WEIGHTS) | set(progress.WEIGHTS) | {RewardCode.STATE_RETURN, RewardCode.NO_SIGNAL} == \
        set(RewardCode)
    # the progress rules' table: "-0.3 more" is the oscillation's weight, "-0.4 more" the stalled DONE's
    rules = docs[docs.index("| rule | effect on the reward | reason |"):]
    shown = {}
    for line in rules.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[1].endswith(" more"):
            shown[cells[2].strip("`").split(":")[0]] = float(cells[1].split()[0])
    assert shown == {str(k): v for k, v in progress.WEIGHTS.items()}
    # the weights decide the scores: a changed entry changes what the scorer gives
    assert score_step(inp(action_type="CLICK", url_before="https://a/x", url_after="https://a/y")).score == \
        reward.WEIGHTS[RewardCode.PAGE_CHANGED]


def test_the_evidence_referees_docstring_shows_its_weights():
    """analyzers/evidence.py WEIGHTS is the referee's table (docs/referee.md is checked in tests/test_readme.py)."""
    from trajcheck.analyzers import evidence

    assert _table_weights(evidence.__doc__ or "", 0, 1) == {str(k): v for k, v in evidence.WEIGHTS.items()}
