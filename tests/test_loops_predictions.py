"""Drift loops, the done gate, and recorded predictions checked offline."""

import pytest

from trajcheck.analyzers import predictions as pr
from trajcheck.analyzers import skeleton as sk
from trajcheck.analyzers.loops import StepSignal, action_key, find_loops, no_observed_delta_after_waits
from trajcheck.base.hashing import Hash64

A, B, C = Hash64(0), Hash64(0xFFFF), Hash64(0xFFFF0000FFFF)


def sig(i, t, s, pre, post):
    return StepSignal(i, t, s, pre, post)


def test_same_action_on_an_unchanging_screen_is_a_loop():
    click = action_key("CLICK", 640, 410, None, None, None)
    assert click.same(action_key("CLICK", 645, 404, None, None, None))  # a few pixels off: same target
    assert not click.same(action_key("CLICK", 700, 410, None, None, None))
    steps = [sig(1, "TYPE", action_key("TYPE", None, None, None, "x", None), A, B),
             sig(2, "CLICK", click, B, B), sig(3, "CLICK", action_key("CLICK", 646, 400, None, None, None), B, B),
             sig(4, "CLICK", click, B, B), sig(5, "CLICK", action_key("CLICK", 10, 10, None, None, None), B, C)]
    got = find_loops(steps, threshold=2)
    assert [(f.loop_id, f.loop_len, f.position) for f in got] == [
        (None, None, None), (1, 3, 1), (1, 3, 2), (1, 3, 3), (None, None, None)]


def test_a_changing_screen_or_a_different_action_breaks_the_loop():
    click = action_key("CLICK", 100, 100, None, None, None)
    steps = [sig(1, "CLICK", click, A, A), sig(2, "CLICK", click, A, B), sig(3, "CLICK", click, B, B)]
    assert all(f.loop_id is None for f in find_loops(steps, threshold=2))


def test_done_after_waits_with_no_change():
    c, w, d = (action_key(t, None, None, None, None, None) for t in ("CLICK", "WAIT", "DONE"))
    steps = [sig(1, "CLICK", c, A, B), sig(2, "WAIT", w, B, B), sig(3, "WAIT", w, B, B), sig(4, "DONE", d, B, B)]
    assert no_observed_delta_after_waits(steps, 2) == [False, False, False, True]
    steps[2] = sig(3, "WAIT", w, B, C)
    assert no_observed_delta_after_waits(steps, 2) == [False, False, False, False]


BEFORE = """<html><body><a id="docs" href="/docs" data-bbox="10 10 80 20"><span>Docs</span></a>
<button id="menu" aria-haspopup="true" aria-expanded="false" data-bbox="100 10 60 20">Menu</button>
<button id="save" data-bbox="200 10 60 20">Save</button><div id="slot"></div></body></html>"""
AFTER = BEFORE.replace('aria-expanded="false"', 'aria-expanded="true"').replace(
    '<div id="slot"></div>', '<div id="slot"><div role="menu"><div role="menuitem">Edit</div></div>'
    '<div class="toast" id="toast">Saved</div></div>')


def trees():
    return sk.parse(BEFORE), sk.parse(AFTER)


def test_expected_outcome_checks_against_the_dom():
    b, a = trees()
    exp = {"element_should_exist": "#toast", "element_should_not_exist": "#error",
           "element_should_have_text": {"selector": "#toast", "text": "saved"},
           "attribute_changes": [{"selector": "#menu", "attribute": "aria-expanded", "value": True}],
           "elements_to_appear": ["[role=menu]"], "roles_exist": ["menuitem"], "url_should_change": False}
    ran, failed, url_ok = pr.check_expected(exp, b, a, "https://x/a", "https://x/a")
    assert len(ran) == 7 and failed == [] and url_ok is True


def test_expected_element_missing_caps_confidence_unless_navigation_as_expected():
    b, a = trees()
    ran, failed, url_ok = pr.check_expected({"element_should_exist": "#nope", "roles_exist": ["menu"],
                                             "element_should_not_exist": "#zzz"}, b, a, "u", "u")
    assert failed == ["element_should_exist:#nope"]
    assert pr.expected_confidence(ran, failed, url_ok, "generic") == 0.6
    ran, failed, url_ok = pr.check_expected({"element_should_exist": "#nope", "url_should_change": True},
                                            b, a, "https://x/a", "https://x/docs")
    assert pr.expected_confidence(ran, failed, url_ok, "navigation") == 0.75


def test_elements_to_appear_fails_when_already_there():
    b, a = trees()
    _, failed, _ = pr.check_expected({"elements_to_appear": "#save"}, b, a, None, None)
    assert failed == ["elements_to_appear:#save"]


def test_bad_selector_is_skipped_not_crashed():
    b, a = trees()
    ran, failed, _ = pr.check_expected({"element_should_exist": "div[[["}, b, a, None, None)
    assert ran == [] and failed == []


@pytest.mark.parametrize("x,y,kind", [(20, 15, "navigation"), (110, 15, "dropdown"), (210, 15, "generic"),
                                      (500, 500, "generic")])
def test_action_kind_from_the_element_at_the_click_point(x, y, kind):
    b, _ = trees()
    assert pr.action_kind("CLICK", None, pr.element_at(b, x, y)) == kind


def test_navigate_is_navigation():
    assert pr.action_kind("NAVIGATE", "https://x", None) == "navigation"


@pytest.mark.parametrize("predict,changed,held", [("frame_changed", True, True), ("frame_changed", False, False),
                                                  ("frame_stable", False, True), ("frame_stable", True, False),
                                                  ("frame_stable", None, None)])
def test_frame_predicates(predict, changed, held):
    assert pr.check_frame_predicate(predict, changed) is held
