"""The effect policy of the perceptual verifier (pure, on constructed evidence)."""

import numpy as np
import pytest

from trajcheck.analyzers.ambient import Transition, learn_ambient
from trajcheck.analyzers.highrisk import HighRisk, classify
from trajcheck.analyzers.perceptual import ImageEvidence, PerceptualOptions, assess, feedback_line, perceptual_summary
from trajcheck.analyzers.pixeldiff import diff_frames
from trajcheck.base.hashing import Hash64

RISKY = HighRisk(True, "keyword", "save")
H0 = Hash64(0)


def frames():
    return np.full((400, 600, 3), 255, dtype=np.uint8)


def ev(a, b, region=(200, 100, 400, 300), g=0, r=0):
    return ImageEvidence(pre_hash=H0, post_hash=Hash64((1 << g) - 1), region=region,
                         pre_region_hash=H0 if region else None,
                         post_region_hash=Hash64((1 << r) - 1) if region else None,
                         change=diff_frames(a, b, region=region), point="in_frame" if region else "none")


def ring(b, x0, y0, x1, y1, w=3):
    b[y0:y0 + w, x0:x1] = (30, 120, 255)
    b[y1 - w:y1, x0:x1] = (30, 120, 255)
    b[y0:y1, x0:x0 + w] = (30, 120, 255)
    b[y0:y1, x1 - w:x1] = (30, 120, 255)


OPTS = PerceptualOptions(threshold=2)


def test_not_high_risk_and_verifier_off_and_missing_frames_are_null():
    a = frames()
    e = ev(a, a.copy())
    f = assess("CLICK", None, classify("CLICK", None, "open the tab"), e, None, OPTS)
    assert f.action_effect_observed is None and f.reason == "not_high_risk" and f.feedback is None
    f = assess("CLICK", None, RISKY, e, None, PerceptualOptions(enabled=False))
    assert f.action_effect_observed is None and f.reason == "verifier_off"
    assert f.action_effect_observed_seed is None
    f = assess("CLICK", None, RISKY, ImageEvidence(problem="frames_missing"), None, OPTS)
    assert f.action_effect_observed is None and f.reason == "frames_missing"


def test_identical_frames_fail_both_rules_with_the_seed_warning():
    a = frames()
    f = assess("CLICK", None, RISKY, ev(a, a.copy()), None, OPTS)
    assert f.action_effect_observed is False and f.reason == "no_pixel_change"
    assert f.action_effect_observed_seed is False and f.seed_reason == "global_and_region_stable"
    assert f.feedback_seed == ("clicked (no visible change); WARNING: high-risk action had no observed effect "
                               "(global_and_region_stable)")


def test_focus_outline_alone_is_no_effect_even_when_the_region_hash_moves():
    a = frames()
    b = a.copy()
    ring(b, 250, 180, 350, 220)
    f = assess("CLICK", None, RISKY, ev(a, b, r=4), None, OPTS)
    assert f.action_effect_observed is False and f.reason == "only_focus_outline"
    assert f.action_effect_observed_seed is True and f.seed_reason == "region_changed"


def test_faint_message_is_an_effect_even_when_hashes_barely_move():
    a = np.full((400, 600, 3), 43, dtype=np.uint8)
    b = a.copy()
    b[230:242, 240:380:2] = 58  # low-contrast text-like strokes under the button
    f = assess("CLICK", None, RISKY, ev(a, b, r=1), None, OPTS)
    assert f.action_effect_observed is True and f.reason == "content_changed_in_region"
    assert f.action_effect_observed_seed is False


def test_toast_far_from_the_click_is_an_effect():
    a = frames()
    b = a.copy()
    b[330:390, 420:590] = (33, 37, 41)
    f = assess("CLICK", None, RISKY, ev(a, b, region=(0, 0, 200, 200), g=6), None, OPTS)
    assert f.action_effect_observed is True and f.reason == "content_changed_outside_region"


def test_ticking_clock_is_ambient_once_the_run_shows_it_changing_on_its_own():
    a = frames()
    clock = []
    for i in range(4):
        b = a.copy()
        b[10:22, 500:540] = 0
        b[12:20, 502 + 8 * i:508 + 8 * i] = 255  # one digit of the clock changes every frame
        clock.append(b)
    transitions = [Transition(diff_frames(clock[i], clock[i + 1]), idle=(i == 1)) for i in range(3)]
    ambient = learn_ambient(transitions)
    assert ambient is not None
    dead_click = ev(clock[2], clock[3], g=3)
    f = assess("CLICK", None, RISKY, dead_click, ambient, OPTS)
    assert f.action_effect_observed is False and f.reason == "only_ambient_change"
    assert f.action_effect_observed_seed is True  # the seed's literal rule counts the clock
    f = assess("CLICK", None, RISKY, dead_click, ambient, PerceptualOptions(ambient=False))
    assert f.action_effect_observed is True


def _quiz(n: int) -> list[np.ndarray]:
    """Frames of a quiz: each answer brings a new question, a different 200x120 block of text."""
    out = []
    for i in range(n):
        b = frames()
        rng = np.random.default_rng(i)
        b[200:320, 300:500] = np.where(rng.random((120, 200, 1)) < 0.3, 0, 255)  # new text each time
        out.append(b)
    return out


def test_a_large_change_at_every_action_is_the_agents_doing_not_ambient():
    """Issue 20: clicks far from their effect, each bringing new content, are not learned as ambient."""
    q = _quiz(5)
    region = (0, 0, 200, 200)  # the answer buttons are elsewhere than the question
    transitions = [Transition(diff_frames(q[i], q[i + 1]), idle=False, region=region) for i in range(4)]
    assert learn_ambient(transitions) is None
    f = assess("CLICK", None, RISKY, ev(q[3], q[4], region=region, g=8), learn_ambient(transitions), OPTS)
    assert f.action_effect_observed is True and f.content_changed


def test_a_small_patch_that_changes_at_every_action_is_ambient():
    a = frames()
    spin = []
    for i in range(5):
        b = a.copy()
        b[20:44, 560:584] = 40 * i  # a 24x24 spinner, far from every click
        spin.append(b)
    transitions = [Transition(diff_frames(spin[i], spin[i + 1]), idle=False, region=(0, 0, 200, 200))
                   for i in range(4)]
    ambient = learn_ambient(transitions)
    assert ambient is not None and ambient[3, 71]  # cell (row 20//8, col 568//8)


def test_the_client_witness_teaches_ambient_away_from_the_click_only():
    a = frames()
    clock1, clock2 = a.copy(), a.copy()
    clock1[10:22, 500:540] = 0
    clock2[10:22, 500:540] = 0
    clock2[12:20, 510:516] = 255
    far = diff_frames(clock1, clock2)
    # quiet pointer steps (no DOM mutation, no request, no URL change) that show the clock ticking: ambient
    assert learn_ambient([Transition(far, idle=False, region=(0, 200, 200, 400), quiet=True, focus_kept=True)] * 2) \
        is not None
    # ... but not when the focus moved: a field losing focus repaints far from the click
    assert learn_ambient([Transition(far, idle=False, region=(0, 200, 200, 400), quiet=True)] * 2) is None
    # without the witness, two clicks are not evidence enough
    assert learn_ambient([Transition(far, idle=False, region=(0, 200, 200, 400))] * 2) is None
    # a focus ring around a wide field reaches past the area around the click: still the click's doing
    b = a.copy()
    ring(b, 20, 150, 580, 190)
    focus = diff_frames(a, b)
    assert learn_ambient([Transition(focus, idle=False, region=(200, 70, 400, 270), quiet=True, focus_kept=True)] * 2) \
        is None
    # a spinner beside the click point of a quiet click, turning again during the DONE: ambient
    s1, s2, s3 = a.copy(), a.copy(), a.copy()
    s2[180:204, 300:324] = 90
    s3[180:204, 300:324] = 180
    click = Transition(diff_frames(s1, s2), idle=False, region=(200, 100, 400, 300), quiet=True)
    done = Transition(diff_frames(s2, s3), idle=True)
    ambient = learn_ambient([click, done])
    assert ambient is not None and ambient[23, 38]
    f = assess("CLICK", None, RISKY, ev(s1, s2, g=3, r=3), ambient, OPTS)
    assert f.action_effect_observed is False and f.reason == "only_ambient_change"
    # ... unless the click was not quiet (it mutated the DOM): then the spinner may be its doing
    assert learn_ambient([Transition(diff_frames(s1, s2), idle=False, region=(200, 100, 400, 300)), done]) is None
    # a checkbox tick in a quiet click that no idle pair repeats stays the click's effect
    t = a.copy()
    t[190:202, 290:302] = 0
    assert learn_ambient([Transition(diff_frames(a, t), idle=False, region=(200, 100, 400, 300), quiet=True),
                          Transition(diff_frames(t, t), idle=True)]) is None
    # a keyboard step has no aimed area: the witness cannot see a typed value, so it teaches nothing
    assert learn_ambient([Transition(focus, idle=False, region=None, quiet=True)] * 2) is None


def test_key_press_has_only_the_global_check():
    a = frames()
    e = ev(a, a.copy(), region=None)
    risk = classify("KEY_PRESS", "Enter", None)
    f = assess("KEY_PRESS", "Enter", risk, e, None, OPTS)
    assert f.seed_reason == "global_stable"
    assert f.feedback == ("pressed Enter (no visible change); WARNING: high-risk action had no observed effect "
                          "(no_pixel_change)")


@pytest.mark.parametrize("g,expected", [(0, False), (2, False), (3, True)])
def test_seed_threshold_is_strictly_above(g, expected):
    a = frames()
    b = a.copy()
    b[0, 0] = 0
    f = assess("CLICK", None, RISKY, ev(a, b, region=None, g=g), None, OPTS)
    assert f.action_effect_observed_seed is expected


def test_summary_is_empty_when_nothing_was_checked_and_counts_otherwise():
    a = frames()
    skip = assess("CLICK", None, HighRisk(False), ev(a, a.copy()), None, OPTS)
    assert perceptual_summary([skip, skip]) == {}
    no = assess("CLICK", None, RISKY, ev(a, a.copy()), None, OPTS)
    b = a.copy()
    b[50:90, 50:150] = 0
    yes = assess("CLICK", None, RISKY, ev(a, b, g=5), None, OPTS)
    assert perceptual_summary([skip, no, yes]) == {"checked": 2, "no_effect": 1}
    assert perceptual_summary([skip, no, yes], seed=True) == {"checked": 2, "no_effect": 1}


def test_feedback_wording():
    assert feedback_line("CLICK", None, "global_and_region_stable") == (
        "clicked (no visible change); WARNING: high-risk action had no observed effect (global_and_region_stable)")


def test_same_input_same_output():
    a = frames()
    b = a.copy()
    ring(b, 250, 180, 350, 220)
    assert assess("CLICK", None, RISKY, ev(a, b, r=4), None, OPTS) == assess("CLICK", None, RISKY, ev(a, b, r=4), None, OPTS)
