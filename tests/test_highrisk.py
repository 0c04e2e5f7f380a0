"""The seed's high-risk table, row by row."""

import pytest

from trajcheck.analyzers.highrisk import HIGH_RISK_KEYWORDS, HighRisk, classify, is_submit_key, keyword_in


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


@pytest.mark.parametrize("keys", ["ctrl+s", "Ctrl+S", "cmd+s", "Control+s", "command+shift+d", "shift+cmd+d",
                                  "ctrl+shift+s"])
def test_save_and_send_shortcuts_are_high_risk(keys):
    r = classify("KEY_PRESS", keys, None)
    assert (r.high_risk, r.rule, r.matched) == (True, "shortcut", keys)


@pytest.mark.parametrize("keys", ["ctrl+c", "cmd+a", "s", "shift+s", "ctrl+alt+s", "Tab"])
def test_other_shortcuts_are_not(keys):
    assert not classify("KEY_PRESS", keys, "save it").high_risk


def test_typed_text_that_submits_is_high_risk():
    # WebVoyager's `Type [N]; text` types and then presses Enter (the reader records then_enter).
    assert classify("TYPE", None, None, "laptops", {"then_enter": True}) == HighRisk(True, "typed_submit", "Enter")
    assert classify("TYPE", None, None, "laptops\n") == HighRisk(True, "typed_submit", "newline")
    assert not classify("TYPE", None, "submit the form", "laptops").high_risk  # typing alone never is
    assert not classify("TYPE", None, None, "laptops", {"then_enter": False}).high_risk
