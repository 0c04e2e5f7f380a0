"""Issue 48, item 2: a final-state check read from a DOM snapshot or a URL recorded before the run's last actions
is undecided, with the count of those actions, as a check on a final frame that actions came after is: the state
they led to was not recorded. The run is a copy of the sample run ``shop-checkout-1080p-jpeg`` (the Enter that
places the order, then DONE) with its answer step, and the frame, DOM snapshot and URL after the Enter, removed."""

from __future__ import annotations

import json
from pathlib import Path

import trajcheck
from trajcheck.analyzers.contract import ContractState, evaluate

from conftest import copy_samples, read_steps, write_steps

RUN = "shop-checkout-1080p-jpeg"


def _score(tmp_path: Path, cut: bool) -> list[dict]:
    run = copy_samples(tmp_path / "runs", only=RUN) / RUN
    if cut:
        steps = read_steps(run)[:-1]  # the DONE step gone: the Enter is the last action
        last = steps[-1]
        assert last["action"]["type"] == "KEY_PRESS"
        last["frames"].pop("post")
        for k in ("dom_after", "url_after", "title_after", "focus_after"):
            last["page"].pop(k)
        write_steps(run, steps)
        for f in ("frames/006.jpg", "frames/007.jpg", "dom/006.html", "dom/007.html"):
            (run / f).unlink()
    trajcheck.score([run], tmp_path / "ledger", ocr="off", force=True)
    row = trajcheck.query(tmp_path / "ledger", "select contract_checks, det_verdict from runs").to_json()[0]
    return [*json.loads(row["contract_checks"]), row["det_verdict"]]


def test_dom_and_url_checks_recorded_before_the_last_action_are_undecided(tmp_path):
    *got, verdict = _score(tmp_path / "cut", cut=True)
    # before: the checkout page's URL and DOM failed both checks of a run that placed its order
    assert [(c["type"], c["passed"]) for c in got] == [("url_matches", None), ("text_present", None)], got
    assert got[0]["evidence"]["undecided"] == \
        "missing evidence: 1 action after the last URL: the final state was not recorded"
    assert got[1]["evidence"]["undecided"] == \
        "missing evidence: 1 action after the last DOM snapshot: the final state was not recorded"
    assert all(c["evidence"]["actions_unseen"] == 1 for c in got)
    assert got[0]["evidence"]["url"] == "http://sample.local/shop/checkout.html"  # what it read is kept
    assert verdict == "uncertain"
    *whole, verdict = _score(tmp_path / "whole", cut=False)  # as recorded: both decided
    assert [(c["passed"], "undecided" in c["evidence"]) for c in whole] == [(True, False), (True, False)]


def test_a_snapshot_recorded_before_actions_decides_no_dom_or_url_check():
    chk = {"checks": [{"type": "url_matches", "pattern": "confirmed"}, {"type": "element_exists", "selector": "p"}]}
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    dom = HTMLParser("<p>Order confirmed</p>")
    fresh = evaluate(chk, ContractState(url="/confirmed", dom=dom, text="Order confirmed"))
    assert [c.passed for c in fresh.checks] == [True, True]
    stale = evaluate(chk, ContractState(url="/confirmed", dom=dom, text="Order confirmed", dom_stale=2, url_stale=2))
    assert [c.passed for c in stale.checks] == [None, None]
    assert stale.checks[1].evidence["undecided"].startswith("missing evidence: 2 actions after the last DOM")
    assert stale.checks[1].evidence["matches"] == 1
