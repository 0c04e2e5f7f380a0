"""The observation verifier and the semantic skeleton (the verification seed, Step 5)."""

import pytest

from trajcheck.analyzers import skeleton as sk
from trajcheck.analyzers.observation import ObservationOptions, PageEvidence, verify

FORM = """<html><head><title>Settings</title><script>var x = 'verify you are human';</script></head><body>
<form><input id="name" name="name" value="Ada"><button id="save" type="submit">Save</button>
<a href="/help" id="help">Help</a><div role="button" aria-expanded="false" id="menu">More</div></form>
<div id="ticker">12:00:01</div></body></html>"""


def snap(html):
    tree = sk.parse(html)
    return sk.dom_hash(html), sk.extract(tree)


def page(before, after, **kw):
    hb, sb = snap(before)
    ha, sa = snap(after)
    return PageEvidence(url_before=kw.pop("url_before", "https://x/settings"),
                        url_after=kw.pop("url_after", "https://x/settings"),
                        dom_before=hb, dom_after=ha, skeleton_before=sb, skeleton_after=sa, **kw)


def test_skeleton_keeps_interactive_elements_and_alerts():
    s = sk.extract(sk.parse(FORM + '<div class="toast">Saved</div>'))
    assert s["save"] == {"tag": "button", "text": "Save"}
    assert s["name"] == {"tag": "input", "value": "Ada"}
    assert s["help"]["href"] == "/help"
    assert s["menu"] == {"tag": "div", "text": "More", "aria-expanded": "false", "role": "button"}
    assert [v["text"] for k, v in s.items() if v.get("alert")] == ["Saved"]


def test_new_message_is_a_meaningful_change():
    f = verify(page(FORM, FORM.replace("</form>", '</form><div role="alert">Saved successfully</div>')))
    assert f.meaningful_change is True and f.something_changed is True
    assert "New message appeared: Saved successfully" in f.observations


def test_attribute_change_is_reported_in_the_seed_wording():
    f = verify(page(FORM, FORM.replace('aria-expanded="false"', 'aria-expanded="true"')))
    assert "Element 'menu' changed 'aria-expanded' from 'false' to 'true'" in f.observations


def test_ticker_changes_the_dom_but_not_the_skeleton():
    f = verify(page(FORM, FORM.replace("12:00:01", "12:00:02")))
    assert f.dom_changed is True and f.meaningful_change is False
    assert f.something_changed is False and f.success is False and f.confidence == 0.2
    assert f.reason == "no_change"
    assert "Page content updated (DOM changed; no interactive element changes detected)" in f.observations


def test_url_change_alone_is_something():
    f = verify(page(FORM, FORM, url_after="https://x/done"))
    assert f.url_changed and f.something_changed
    assert f.observations[0] == "Navigation occurred: URL changed from https://x/settings to https://x/done"


@pytest.mark.parametrize("field", ["did_network_occur", "did_dom_mutate", "did_url_change"])
def test_client_witness_overrides_no_change(field):
    f = verify(page(FORM, FORM, **{field: True}))
    assert f.something_changed is True and f.reason == "client_witness_only"


def test_hash_only_path_without_skeletons():
    f = verify(PageEvidence(url_before="u", url_after="u", dom_before="a", dom_after="b"))
    assert f.meaningful_change is True and "Page content updated (DOM changed)" in f.observations


@pytest.mark.parametrize("ok,done,conf,success,goal,low", [
    (True, False, 0.9, True, False, False),
    (True, True, 0.75, True, True, True),  # low-confidence completion band [0.70, 0.85)
    (True, True, 0.69, False, False, False),
    (False, True, 0.95, False, True, False),
])
def test_semantic_verdict_thresholds(ok, done, conf, success, goal, low):
    f = verify(page(FORM, FORM, url_after="https://x/next", action_succeeded=ok, task_completed=done,
                    confidence=conf))
    assert (f.success, f.goal_achieved, f.low_confidence_completion) == (success, goal, low)


def test_thresholds_are_options():
    ev = page(FORM, FORM, url_after="https://x/next", action_succeeded=True, task_completed=True, confidence=0.75)
    f = verify(ev, ObservationOptions(success_threshold=0.8, goal_threshold=0.8))
    assert f.success is False and f.goal_achieved is False


def test_no_change_never_sets_goal_achieved():
    f = verify(page(FORM, FORM, action_succeeded=True, task_completed=True, confidence=0.99))
    assert f.goal_achieved is None and f.success is False


def test_no_page_evidence_is_not_applicable():
    assert verify(PageEvidence()).reason == "no_page_evidence"


def test_page_text_ignores_scripts():
    t = sk.page_text(sk.parse(FORM))
    assert t.title == "Settings" and "verify you are human" not in t.text and "Save" in t.text


def test_an_element_two_selectors_match_is_one_element_and_one_message():
    """lexbor gives a node once per selector of a list that matches it: a toast with role=alert and class
    toast, or a button with role=button, is still one message and one element, observed once."""
    before = sk.extract(sk.parse("<main><button id=go role=button>Go</button><a role=link>Help</a></main>"))
    after = sk.extract(sk.parse("<main><div role=alert class='toast success'>Saved</div>"
                                "<button id=go role=button>Go</button><a role=link>Help</a></main>"))
    assert sorted(before) == ["a#1", "go"]
    assert sorted(after) == ["a#1", "go", "message#1"]
    assert sk.diff(before, after) == ["New message appeared: Saved"]
