"""The seed's high-risk table, row by row."""

import pytest

from trajcheck.analyzers.highrisk import HIGH_RISK_KEYWORDS, classify, is_submit_key, keyword_in


@pytest.mark.parametrize("keys", ["Return", "Enter", "ctrl+Return", "ctrl+Enter", "shift+Enter",
                                  "Ctrl+Shift+Return", "ENTER", " enter "])
def test_key_press_with_return_or_enter_is_high_risk(keys):
    r = classify("KEY_PRESS", keys, None)
    assert r.high_risk and r.rule == "submit_key"


@pytest.mark.parametrize("keys", ["Tab", "Escape", "ctrl+a", "Enter+a", "", None, "KP_Enter2"])
def test_other_key_presses_are_not(keys):
    assert not classify("KEY_PRESS", keys, "submit the form").high_risk


@pytest.mark.parametrize("kw", HIGH_RISK_KEYWORDS)
def test_click_with_each_seed_keyword_is_high_risk(kw):
    r = classify("CLICK", None, f"Now I will {kw.upper()} to finish")
    assert r.high_risk and r.rule == "keyword" and r.matched == kw


@pytest.mark.parametrize("text", ["Open the settings tab", "Click the Next link", "resend the code",
                                  "unsaved changes tab", "Scroll the catalogue", "", None])
def test_click_without_keyword_is_not(text):
    assert not classify("CLICK", None, text).high_risk


@pytest.mark.parametrize("atype", ["WAIT", "DONE", "SCROLL", "TYPE", "DOUBLE_CLICK", "NAVIGATE", "HOVER"])
def test_other_action_types_are_never_high_risk(atype):
    assert not classify(atype, "Enter", "submit save delete").high_risk


@pytest.mark.parametrize("text,kw", [
    ("Click the Sign-in button", "sign in"), ("log   in now", "log in"), ("The form was submitted", "submit"),
    ("press Place order", "place order"), ("Checkout", "checkout"), ("send_message", "send"),
    ("Saved searches", "save"),
])
def test_keyword_matching_is_word_aware_with_suffixes(text, kw):
    assert keyword_in(text) == kw


def test_enter_key_detection():
    assert is_submit_key("alt+Return") and not is_submit_key("Return+alt")
