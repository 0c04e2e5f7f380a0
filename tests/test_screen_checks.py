"""Issue 39, parts 2 and 3: contracts over what the screen shows, and the final screen read of every run that
needs it.

Every text check type is evaluated on a state with its DOM and on one without (its evidence then the lines OCR
read, built here by hand); then end to end: the sample runs scored without their DOM snapshots and with their
contracts give no wrong verdict (only uncertain allowed), call no true success a false claim, and read the final
frame of every run that claims success; a contract of screen checks on one sample run is decided alike with and
without its DOM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

import trajcheck
from trajcheck.analyzers.contract import ContractState, evaluate
from trajcheck.analyzers.screencheck import (SCREEN_FALLBACK_WEIGHT, ScreenEvidence, ScreenView, area, pattern,
                                             reads_screen)
from trajcheck.analyzers.screentext import TextLine
from trajcheck.base.box import Box
from trajcheck.media import ocr

from conftest import SAMPLES, copy_samples

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")

HTML = "<html><body><h1>Order TH-20931 confirmed</h1><div id='status'>Shipped</div></body></html>"


def dom_state(**kw) -> ContractState:
    tree = LexborHTMLParser(HTML)
    return ContractState(url="https://shop.test/done", dom=tree, text=tree.body.text(separator=" "), **kw)


def screen(*lines: tuple[str, float], frame: str = "final") -> ScreenEvidence:
    got = tuple(TextLine(t, c, Box(10, 20 * i, 300, 20 * i + 15)) for i, (t, c) in enumerate(lines))
    return ScreenEvidence((ScreenView(frame, "frames/009.png", Box(0, 0, 1280, 800), got),))


def one(chk: dict, st: ContractState):
    res = evaluate({"checks": [chk]}, st)
    return res.verdict, res.checks[0]


CONFIRMED = screen(("Order TH-20931 confirmed", 0.96), ("Your backpack ships tomorrow.", 0.93))


@pytest.mark.parametrize("chk, with_dom, on_screen", [
    ({"type": "text_present", "text": "confirmed"}, True, True),
    ({"type": "text_present", "text": "Payment failed"}, False, False),
    ({"type": "text_absent", "text": "Payment failed"}, True, True),
    ({"type": "text_absent", "text": "confirmed"}, False, False),
    ({"type": "text_matches", "pattern": r"Order [A-Z]{2}-\d+ confirmed"}, True, True),
    ({"type": "text_matches", "pattern": r"Order \d+ refunded"}, False, False),
])
def test_each_text_check_is_decided_by_the_dom_and_by_the_screen_alike(chk, with_dom, on_screen):
    verdict, c = one(chk, dom_state())
    assert c.passed is with_dom and c.evidence.get("source") is None  # the DOM decides where there is one
    verdict, c = one(chk, ContractState(screen={1: CONFIRMED}))
    assert c.passed is on_screen and c.evidence["source"] == "screen_text"
    assert verdict == ("pass" if on_screen else "fail")
    if "box" in c.evidence:  # found: the frame, the line's box, the confidence
        assert c.evidence["frame"] == "final" and c.evidence["file"] == "frames/009.png"
        assert c.evidence["box"] == [10, 0, 290, 15] and c.evidence["confidence"] == 0.96
    else:  # not found: what was read, and how confidently
        assert c.evidence["lines_read"] == 2 and c.evidence["min_confidence"] == 0.93


@pytest.mark.parametrize("chk", [{"type": "text_present", "text": "confirmed"},
                                 {"type": "text_absent", "text": "confirmed"},
                                 {"type": "text_matches", "pattern": "confirmed"}])
def test_a_read_below_the_confidence_threshold_is_undecided_never_failed(chk):
    verdict, c = one(chk, ContractState(screen={1: screen(("Order TH-20931 confirmed", 0.55))}))
    assert c.passed is None and verdict == "uncertain"
    assert "confidence" in c.evidence["undecided"] and c.evidence["confidence"] == 0.55


def test_a_line_that_reads_almost_like_the_text_is_a_misread_not_a_failure():
    _, c = one({"type": "text_present", "text": "Order confirmed"},
               ContractState(screen={1: screen(("0rder confimed", 0.9))}))
    assert c.passed is None and "almost" in c.evidence["undecided"]
    _, c = one({"type": "text_matches", "pattern": "shipped"},  # a regex cannot tell a misread: a shaky line holds
               ContractState(screen={1: screen(("Order confirmed", 0.95), ("Sh1pped", 0.6))}))
    assert c.passed is None


@pytest.mark.parametrize("text, line, holds", [
    ("I agree to the terms", "| agree to the terms of service", True),  # a capital I read as a bar
    ("Install", "lnstall", True),
    ("‹ Back to orders", "<Back to orders", True),  # an angle quote read as "<", its space dropped
    ("Don’t show again", "Don't show again", True),
    ("Pay now", "PAY NOW", True),
    ("mail", "mall", False),  # a dotted i is not folded: a word OCR reads well stays itself
    ("Order 10", "Order 1O", False),  # nor are digits
    ("log in", "login", False),  # a space between letters is a space
    ("Thanks for signing up", "Thanks for singing up", False),
    ("Straße", "Strase", False),  # a letter whose capital is two letters is matched as written
])
def test_glyphs_ocr_reads_for_one_another_match_and_nothing_else_does(text, line, holds):
    assert (pattern(text).search(line) is not None) is holds
    _, c = one({"type": "text_present", "text": text}, ContractState(screen={1: screen((line, 0.95))}))
    if holds:
        assert c.passed is True and c.evidence["box"] == [10, 0, 290, 15]
        _, c = one({"type": "text_absent", "text": text}, ContractState(screen={1: screen((line, 0.95))}))
        assert c.passed is False  # found, however it was read: not absent


def test_a_pattern_that_matches_but_for_a_misread_is_undecided_not_failed():
    chk = {"type": "text_matches", "pattern": r"Order [A-Z]{2}-\d+ confirmed"}
    _, c = one(chk, ContractState(screen={1: screen(("Order TH-2O931 confirmed", 0.95))}))  # O read for 0
    assert c.passed is None and "almost like a match" in c.evidence["undecided"]
    _, c = one(chk, ContractState(screen={1: screen(("Order TH-20931 cancelled", 0.95))}))  # another text
    assert c.passed is False
    _, c = one({"type": "text_matches", "pattern": "saved"},  # a short word: a "Save" button is no misread of it
               ContractState(screen={1: screen(("Save preferences", 0.95))}))
    assert c.passed is False
    # a line read below the confidence threshold leaves undecided only a pattern it reads almost like
    _, c = one(chk, ContractState(screen={1: screen(("Order TH-20931 cancelled", 0.95), ("@® ~ Help", 0.3))}))
    assert c.passed is False
    _, c = one(chk, ContractState(screen={1: screen(("0rder TH-2O93l c0nfirmed", 0.5))}))
    assert c.passed is None and "almost like a match" in c.evidence["undecided"]



@pytest.mark.slow
@pytest.mark.parametrize("chk", [{"type": "text_matches", "pattern": "(a|aa)+b"},
                                 {"type": "url_matches", "pattern": "(a|aa)+b"},
                                 {"type": "element_text", "selector": "#status", "pattern": "(a|aa)+b"},
                                 {"type": "answer_matches", "pattern": "(a|aa)+b"}])
def test_a_pattern_that_backtracks_without_end_is_stopped_and_left_undecided(chk):
    """The pattern is the user's, the text the run's (a page, a screen line, the answer): Python's re, and
    regex without a limit, backtrack on sixty a's for longer than the age of the universe. Each search stops
    after patterns.TIMEOUT seconds."""
    text = "a" * 60
    html = f"<html><body><div id='status'>{text}</div></body></html>"
    tree = LexborHTMLParser(html)
    for st in (ContractState(url=f"https://x.test/{text}", dom=tree, text=text, answer=text),
               ContractState(screen={1: screen((text, 0.95))}, answer=text)):
        if chk["type"] == "url_matches" and st.url is None:
            continue
        verdict, c = one(chk, st)
        assert c.passed is None and verdict == "uncertain", c
        assert "took over" in c.evidence["undecided"] and "rewrite it" in c.evidence["undecided"], c


def test_no_legible_text_and_no_read_are_undecided():
    for ev in (screen(), None):
        st = ContractState(screen={1: ev} if ev else {}, screen_missing="screen text not read (--ocr off)")
        for chk in ({"type": "text_present", "text": "x"}, {"type": "text_absent", "text": "x"}):
            verdict, c = one(chk, st)
            assert c.passed is None and verdict == "uncertain"
            assert c.evidence["undecided"].startswith("missing evidence: ")
    _, c = one({"type": "text_present", "text": "x"}, ContractState(screen_missing="screen text not read (--ocr off)"))
    assert "--ocr off" in c.evidence["undecided"]


def test_element_text_falls_back_to_its_pattern_on_the_screen_at_a_lower_weight():
    chk = {"type": "element_text", "selector": "#status", "pattern": "Ship"}
    _, c = one(chk, dom_state())
    assert c.passed is True and "weight" not in c.evidence
    _, c = one(chk, ContractState(screen={1: screen(("Status: Shipped", 0.9))}))
    assert c.passed is True and c.evidence["weight"] == SCREEN_FALLBACK_WEIGHT < 1
    _, c = one(chk, ContractState(screen={1: CONFIRMED}))  # not on screen: the element may be scrolled away
    assert c.passed is None and "selector" in c.evidence["undecided"]


def test_dom_only_checks_without_a_dom_are_undecided():
    for chk in ({"type": "element_exists", "selector": "h1"}, {"type": "element_absent", "selector": ".error"}):
        assert one(chk, dom_state())[1].passed is True
        _, c = one(chk, ContractState(screen={1: CONFIRMED}))
        assert c.passed is None and "no DOM" in c.evidence["undecided"]


def test_the_answer_is_checked_against_a_pattern_or_a_value():
    st = ContractState(answer="The total is 1,240.00")
    assert one({"type": "answer_matches", "pattern": r"total is [\d,.]+"}, st)[1].passed is True
    assert one({"type": "answer_matches", "pattern": r"^\d+$"}, st)[1].passed is False
    assert one({"type": "answer_matches", "value": "1240"}, ContractState(answer=" 1,240.0 "))[1].passed is True
    assert one({"type": "answer_matches", "value": "Paris"}, ContractState(answer="paris."))[1].passed is True
    assert one({"type": "answer_matches", "value": "Paris"}, ContractState(answer="Lyon"))[1].passed is False
    _, c = one({"type": "answer_matches", "value": "Paris"}, ContractState())
    assert c.passed is None and "no final answer" in c.evidence["undecided"]


def test_a_bad_pattern_is_the_contracts_to_fix():
    _, c = one({"type": "text_matches", "pattern": "(unclosed"}, ContractState(screen={1: CONFIRMED}))
    assert c.passed is None and c.evidence["undecided"].startswith("cannot evaluate: bad pattern")


def test_which_checks_read_the_screen_and_where():
    assert reads_screen({"type": "text_present", "text": "x"}, has_dom=False)
    assert not reads_screen({"type": "text_present", "text": "x"}, has_dom=True)
    assert reads_screen({"type": "text_present", "text": "x", "area": "title"}, has_dom=True)  # pixels: the screen
    assert reads_screen({"type": "text_absent", "text": "x", "frame": 2}, has_dom=True)  # another state's screen
    assert not reads_screen({"type": "element_exists", "selector": "h1"}, has_dom=False)
    assert area({"area": "title"}, 2560, 1600, 2.0) == Box(0, 0, 2560, 128)
    assert area({"region": [10, 10, 100, 20]}, 1280, 800, 1.0) == Box(10, 10, 110, 30)
    assert area({"region": [1200, 10, 100, 20]}, 1280, 800, 1.0) is None
    assert area({}, 1280, 800, 1.0) == Box(0, 0, 1280, 800)


def test_a_check_on_any_frame_holds_if_one_frame_shows_the_text():
    ev = ScreenEvidence((ScreenView("before step 1", "a.png", Box(0, 0, 9, 9),
                                    (TextLine("Sign in", 0.9, Box(0, 0, 9, 9)),)),
                         ScreenView("after step 3", "b.png", Box(0, 0, 9, 9),
                                    (TextLine("Code sent to your phone", 0.92, Box(0, 0, 9, 9)),))))
    _, c = one({"type": "text_present", "text": "code sent", "frame": "any"}, ContractState(screen={1: ev}))
    assert c.passed is True and c.evidence["frame"] == "after step 3"
    _, c = one({"type": "text_absent", "text": "code sent", "frame": "any"}, ContractState(screen={1: ev}))
    assert c.passed is False
    capped = ScreenEvidence(ev.views, "3 frames past the first 40 were not read")
    _, c = one({"type": "text_absent", "text": "error", "frame": "any"}, ContractState(screen={1: capped}))
    assert c.passed is None  # absence is not shown when frames were left unread


# -- end to end -------------------------------------------------------------------------------------------------

def _copy(dst: Path, dom: bool, contract: dict | None = None, only: str | None = None) -> Path:
    """The sample runs without their evaluator (so that the contracts decide), and without their DOM if asked."""
    return copy_samples(dst, dom=dom, evaluator=False, contract=contract, only=only)


@pytest.mark.slow
@needs_ocr
def test_sample_runs_without_their_dom_read_the_screen_and_give_no_wrong_verdict(tmp_path):
    trajcheck.score([_copy(tmp_path / "runs", dom=False)], tmp_path / "l", jobs=1, ocr="auto")
    labels = json.loads((SAMPLES / "labels.json").read_text())
    got = {r["run_id"]: r for r in trajcheck.query(tmp_path / "l", "select * from runs").to_json()}
    decided_by_screen = 0
    for run_id, r in got.items():
        truth = labels[run_id]["outcome"]
        assert r["eval_final_verdict"] in (truth, "uncertain", "unknown"), run_id
        if truth == "pass":
            assert not r["false_claim"], run_id
        if r["claimed_success"]:  # every claiming run without a DOM has its final frame read
            assert r["screen_text_final"] is not None, run_id
        checks = json.loads(r["contract_checks"] or "[]")
        decided_by_screen += sum(1 for c in checks if c["evidence"].get("source") == "screen_text"
                                 and c["passed"] is not None)
    assert decided_by_screen >= 5  # the sample contracts' text checks, decided from the screen


SIGNUP = [{"type": "text_present", "text": "Thanks for signing up"},
          {"type": "text_absent", "text": "Thanks for signing up", "frame": 0},
          {"type": "text_matches", "pattern": r"confirmation link to your \w+ email"},
          {"type": "text_absent", "text": "Something went wrong", "frame": "any"},
          {"type": "text_present", "text": "Thanks for signing up", "region": [300, 100, 700, 80]}]
CHECKOUT = [{"type": "text_matches", "pattern": r"Order [A-Z]{2}-\d+ confirmed"},
            {"type": "answer_matches", "value": "th-20931"},
            {"type": "answer_matches", "pattern": r"^[A-Z]{2}-\d{5}$"},
            {"type": "text_absent", "text": "confirmed", "frame": 0}]


@pytest.mark.slow
@needs_ocr
@pytest.mark.parametrize("run, checks", [("validation-flash-on", SIGNUP), ("shop-checkout-1080p-jpeg", CHECKOUT)])
def test_a_contract_of_screen_checks_is_decided_alike_with_and_without_the_dom(tmp_path, run, checks):
    contract = {"format": "trajcheck.contract/1", "checks": checks}
    out = {}
    for dom in (True, False):
        runs = _copy(tmp_path / f"runs-{dom}", dom, contract, only=run)
        trajcheck.score([runs], tmp_path / f"l-{dom}", jobs=1, ocr="auto")
        r = trajcheck.query(tmp_path / f"l-{dom}", "select * from runs").to_json()[0]
        out[dom] = (r["det_verdict"], [c["passed"] for c in json.loads(r["contract_checks"])])
    assert out[True] == out[False] == ("pass", [True] * len(checks))


@pytest.mark.slow
@needs_ocr
def test_the_final_read_reuses_what_the_last_high_risk_step_read(tmp_path, monkeypatch):
    from trajcheck.media import screenread

    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    calls = {"n": 0}
    real_read = screenread.ScreenReader.read

    def counted(self, *a, **kw):
        calls["n"] += 1
        return real_read(self, *a, **kw)

    seen: dict[str, tuple[int, int, bool]] = {}
    real_final = screenread.ScreenPlan.read_final

    def final(self, run, screen, *a, **kw):
        before = calls["n"]
        got = real_final(self, run, screen, *a, **kw)
        last = self.last_high_risk()
        seen[run.run_id] = (calls["n"] - before, len(got), last is not None and bool(screen[last]))
        return got

    monkeypatch.setattr(screenread.ScreenReader, "read", counted)
    monkeypatch.setattr(screenread.ScreenPlan, "read_final", final)
    runs = tmp_path / "runs"
    for name in ("nc-profile-toast", "menu-toggle-aimless", "shop-checkout-1080p-jpeg"):
        _copy(runs, dom=False, only=name)
    trajcheck.score([runs], tmp_path / "l", jobs=1, ocr="auto")
    # the final frame is the last high-risk step's post frame: its read is the final read, nothing read again
    assert seen["nc-profile-toast"][0] == 0 and seen["nc-profile-toast"][1] > 0 and seen["nc-profile-toast"][2]
    # no high-risk step: what changed since the first frame is read
    assert seen["menu-toggle-aimless"][0] >= 1 and seen["menu-toggle-aimless"][1] > 0
    got = {r["run_id"]: r for r in trajcheck.query(tmp_path / "l", "select * from runs").to_json()}
    assert all(r["screen_text_final"] for r in got.values())


@needs_ocr
@pytest.mark.parametrize("run, chk, passed", [
    ("nc-pay-loop", {"type": "text_present", "text": "Pay now"}, True),  # white on a blue button
    ("nc-pay-loop", {"type": "text_absent", "text": "Pay now"}, False),
    ("terms-checkbox-off", {"type": "text_present", "text": "Submit"}, True),  # white on light blue
    ("menu-toggle-aimless", {"type": "text_present", "text": "Help"}, True),  # a menu bar: read at twice its size
    ("consent-overlay-off", {"type": "text_present", "text": "Email address"}, True),  # dimmed behind a dialog
    ("nc-pay-loop", {"type": "text_present", "text": "Payment received"}, False),  # not there, however read
    ("dark-faint-and-toast", {"type": "text_present", "text": "Preferences saved"}, True),  # grey on dark grey
    ("dark-faint-and-toast", {"type": "text_absent", "text": "Preferences saved"}, False),
    ("dark-faint-and-toast", {"type": "text_present", "text": "Password changed"}, False),
    ("dark-faint-and-toast", {"type": "text_present", "text": "Spell check"}, True),  # a toggle icon before it
    ("terms-checkbox-off", {"type": "text_present", "text": "I agree to the terms of service"}, True),  # "| agree"
    ("paged-results-progress", {"type": "text_present", "text": "‹ Back to orders"}, True),  # "<Back"
])
@pytest.mark.slow
def test_a_check_that_has_not_found_its_text_reads_what_the_page_read_misses(tmp_path, run, chk, passed):
    """Read whole at its own resolution, a frame's page read misses the light text of solid elements and small
    text; a check that has not found its text reads the elements alone, the frame at twice its size and faint
    words with their contrast stretched before it fails, so a text on the screen does not fail a true success's check."""
    runs = copy_samples(tmp_path / "runs", dom=False, evaluator=False, only=run,
                        contract={"format": "trajcheck.contract/1", "checks": [chk]})
    trajcheck.score([runs], tmp_path / "ledger", jobs=1, ocr="auto")
    row = trajcheck.query(tmp_path / "ledger", "select contract_checks from runs").to_json()[0]
    got = json.loads(row["contract_checks"])[0]
    assert got["passed"] is passed, got
    assert got["evidence"]["source"] == "screen_text"
