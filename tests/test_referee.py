"""Contracts (every check type), the grid detector, the verdict table, false_claim,
lesson_promotable (pure analyzers on constructed state)."""

from __future__ import annotations

import numpy as np
import pytest

from trajcheck.analyzers import skeleton as sk
from trajcheck.analyzers.contract import (ContractResult, ContractState, Picture, CheckResult, evaluate, detect_active,
                                          grid_cells, hashed_regions)
from trajcheck.analyzers.referee import Judge, choose_judges, decide, reference_judge
from trajcheck.media.frames import from_array
from trajcheck.scoring.loading import picture


def pic(rgb: np.ndarray, contract: dict | None = None) -> Picture:
    """The picture the loading stage hands the analyzers, with the pHashes of the regions ``contract`` compares."""
    return picture(from_array(rgb), hashed_regions(contract))


def page_frame(seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.full((300, 400, 3), 240, dtype=np.uint8)
    base[20:60, 20:380] = rng.integers(0, 255, size=(40, 360, 3), dtype=np.uint8)  # some texture
    return base


def grid_frame(active: set[int], row=0, rows=2, cols=16, shade_groups=True) -> np.ndarray:
    """A step grid like a sequencer: inactive cells grey (alternating shades per group of 4), active orange."""
    img = np.full((rows * 30 + 20, cols * 30 + 20, 3), 30, dtype=np.uint8)
    for r in range(rows):
        for c in range(cols):
            color = (90, 90, 96) if (c // 4) % 2 == 0 or not shade_groups else (70, 70, 76)
            if r == row and (c + 1) in active:
                color = (250, 140, 30)
            img[10 + r * 30 + 3:10 + (r + 1) * 30 - 3, 10 + c * 30 + 3:10 + (c + 1) * 30 - 3] = color
    return img


GRID = {"type": "grid", "box": [10, 10, 480, 60], "rows": 2, "cols": 16, "target_row": 1,
        "required_steps": [1, 5, 9, 13]}


def test_grid_right_pattern_passes_with_a_clear_margin():
    r = evaluate({"name": "kick", "checks": [GRID]}, ContractState(frame=pic(grid_frame({1, 5, 9, 13}))))
    assert r.verdict == "pass"
    ev = r.checks[0].evidence
    assert ev["active_steps"] == [1, 5, 9, 13] and ev["margin"] > 0.5


def test_grid_near_miss_fails_naming_the_wrong_step():
    r = evaluate({"checks": [GRID]}, ContractState(frame=pic(grid_frame({1, 5, 9, 14}))))
    ev = r.checks[0].evidence
    assert r.verdict == "fail" and ev["missing_required"] == [13] and ev["forbidden_active"] == [14]


def test_grid_extra_step_fails_and_explicit_forbidden_list_is_respected():
    frame = pic(grid_frame({1, 5, 9, 13, 16}))
    assert evaluate({"checks": [GRID]}, ContractState(frame=frame)).verdict == "fail"
    lenient = dict(GRID, forbidden_steps=[2, 3])
    assert evaluate({"checks": [lenient]}, ContractState(frame=frame)).verdict == "pass"


def test_grid_with_nothing_active():
    active, margin, _ = detect_active(grid_cells(pic(grid_frame(set())), [10, 10, 480, 60], 2, 16), 0)
    assert active == [] and margin > 0


def test_page_checks():
    html = '<html><title>Done</title><body><h1 class="ok">Thank you, order 42</h1><p>Order placed</p></body></html>'
    tree = sk.parse(html)
    st = ContractState(url="https://shop/orders/42", dom=tree, text=sk.page_text(sk.parse(html)).text)
    checks = [{"type": "url_matches", "pattern": r"/orders/\d+$"},
              {"type": "element_exists", "selector": "h1.ok"},
              {"type": "element_absent", "selector": ".error"},
              {"type": "element_text", "selector": "h1", "pattern": r"order \d+"},
              {"type": "text_present", "text": "order placed"},
              {"type": "text_absent", "text": "payment failed"}]
    r = evaluate({"checks": checks}, st)
    assert r.verdict == "pass" and len(r.checks) == 6
    bad = evaluate({"checks": [{"type": "element_exists", "selector": ".error"},
                               {"type": "url_matches", "pattern": "/cart$"}]}, st)
    assert bad.verdict == "fail" and [c.passed for c in bad.checks] == [False, False]
    assert bad.checks[0].evidence == {"selector": ".error", "matches": 0}


#: One check of every type, each of which would pass on the full evidence below (FULL_STATE).
EVERY_CHECK = [
    {"type": "url_matches", "pattern": r"/orders/\d+$"},
    {"type": "element_exists", "selector": "h1.ok"},
    {"type": "element_absent", "selector": ".error"},
    {"type": "element_text", "selector": "h1", "pattern": r"order \d+"},
    {"type": "text_present", "text": "order placed"},
    {"type": "text_absent", "text": "payment failed"},
    {"type": "region_matches", "region": [20, 20, 300, 200], "reference": "ref.png", "max_distance": 0},
    {"type": "region_changed", "region": [100, 200, 100, 40], "since_step": 1},
    {"type": "region_unchanged", "region": [20, 20, 100, 30], "since_step": 1},
    dict(GRID, box=[0, 245, 400, 50], rows=1, cols=10, required_steps=[1]),
]


def _full_state(drop: str | None = None) -> ContractState:
    """The evidence every check of EVERY_CHECK needs, less ``drop``: dom (the DOM snapshot and its text), url,
    frame (the final frame), before (the frame after step 1) or reference."""
    html = '<html><body><h1 class="ok">Thank you, order 42</h1><p>Order placed</p></body></html>'
    c = {"checks": EVERY_CHECK}
    before = page_frame(1)
    after = before.copy()
    after[200:240, 100:200] = 0
    after[245:295, 0:40] = (250, 140, 30)  # the grid's first cell, active
    st = ContractState(url="https://shop/orders/42", dom=sk.parse(html), text=sk.page_text(sk.parse(html)).text,
                       frame=pic(after, c), frames_after={1: pic(before, c)}, references={"ref.png": pic(after.copy(), c)})
    if drop == "dom":
        st.dom = st.text = None
    elif drop == "url":
        st.url = None
    elif drop == "frame":
        st.frame = None
    elif drop == "before":
        st.frames_after = {}
    elif drop == "reference":
        st.references = {}
    return st


#: Which checks each piece of evidence decides.
NEEDS = {"dom": {"element_exists", "element_absent", "element_text", "text_present", "text_absent"},
         "url": {"url_matches"}, "frame": {"region_matches", "region_changed", "region_unchanged", "grid"},
         "before": {"region_changed", "region_unchanged"}, "reference": {"region_matches"}}


def test_every_check_type_passes_on_its_evidence():
    r = evaluate({"checks": EVERY_CHECK}, _full_state())
    assert r.verdict == "pass", [(c.type, c.evidence) for c in r.checks if not c.passed]
    assert {c.type for c in r.checks} == set().union(*NEEDS.values())


@pytest.mark.parametrize("drop", sorted(NEEDS))
def test_a_check_without_its_evidence_is_undecided_never_failed(drop):
    """Missing evidence is not evidence of failure: every check that needs what was dropped is undecided
    (passed None, naming what is missing), every other check still holds, and the contract is uncertain."""
    r = evaluate({"checks": EVERY_CHECK}, _full_state(drop))
    undecided = {c.type for c in r.undecided}
    assert undecided == NEEDS[drop]
    assert r.failed == [] and r.verdict == "uncertain"
    assert all(c.passed is True for c in r.checks if c.type not in NEEDS[drop])
    assert all(c.evidence["undecided"].startswith("missing evidence: ") for c in r.undecided)
    assert all(c.to_json()["passed"] is None for c in r.undecided)


@pytest.mark.parametrize("drop", sorted(NEEDS))
def test_a_failed_check_still_fails_the_contract_beside_an_undecided_one(drop):
    failing = {"type": "url_matches", "pattern": "/cart$"} if drop != "url" else \
        {"type": "region_unchanged", "region": [100, 200, 100, 40], "since_step": 1}
    r = evaluate({"checks": [*EVERY_CHECK, failing]}, _full_state(drop))
    assert r.verdict == "fail" and [c.type for c in r.failed] == [failing["type"]] and r.undecided


def test_a_check_that_cannot_be_evaluated_as_written_is_undecided():
    st = _full_state()
    for chk in ({"type": "element_exists", "selector": "h1[["}, {"type": "no_such_check"},
                {"type": "region_changed", "region": [390, 290, 50, 50], "since_step": 1},
                dict(GRID, target_row=5)):
        r = evaluate({"checks": [chk]}, st)
        assert r.verdict == "uncertain" and r.checks[0].passed is None, chk
        assert r.checks[0].evidence["undecided"].startswith("cannot evaluate: ")


def test_frame_checks():
    before = page_frame(1)
    after = before.copy()
    after[200:240, 100:200] = 0
    checks = [{"type": "region_changed", "region": [100, 200, 100, 40], "since_step": 1},
              {"type": "region_unchanged", "region": [20, 20, 100, 30], "since_step": 1},
              {"type": "region_matches", "region": [20, 20, 300, 200], "reference": "ref.png", "max_distance": 0}]
    c = {"checks": checks}
    st = ContractState(frame=pic(after, c), frames_after={1: pic(before, c)}, references={"ref.png": pic(after.copy(), c)})
    r = evaluate(c, st)
    assert r.verdict == "pass", [c.evidence for c in r.checks]
    assert r.checks[0].evidence["changed_px"] == 4000
    st2 = ContractState(frame=pic(before, c), frames_after={1: pic(before, c)},
                        references={"ref.png": pic(page_frame(7), c)})
    r2 = evaluate(c, st2)
    assert [c.passed for c in r2.checks] == [False, True, False]


def test_region_outside_the_frame_is_undecided_not_a_crash():
    r = evaluate({"checks": [{"type": "region_changed", "region": [390, 290, 50, 50], "since_step": 1}]},
                 ContractState(frame=pic(page_frame()), frames_after={1: pic(page_frame())}))
    assert r.verdict == "uncertain" and "outside" in r.checks[0].evidence["undecided"]


def test_reference_judge_rubric():
    goal = page_frame(3)
    c = {"judge_regions": [[20, 20, 200, 40]]}
    same = reference_judge(pic(goal, c), [("goal.png", pic(goal.copy(), c))], [[20, 20, 200, 40]])
    assert same.verdict == "pass" and same.model == "reference-phash" and same.score == 1.0
    other = reference_judge(pic(page_frame(9), c), [("goal.png", pic(goal, c))], [[20, 20, 200, 40]])
    assert other.verdict == "fail"
    assert reference_judge(pic(goal), [], []) is None
    # A reference of another size cannot be compared region by region: no judge, not a fail.
    small = page_frame(3)[:200, :300]
    assert reference_judge(pic(goal, c), [("small.png", pic(small, c))], [[20, 20, 200, 40]]) is None
    both = reference_judge(pic(goal, c), [("small.png", pic(small, c)), ("goal.png", pic(goal.copy(), c))],
                           [[20, 20, 200, 40]])
    assert both.verdict == "pass" and not any("small.png" in r for r in both.reasons)


PASS = ContractResult("pass", "c", (CheckResult("grid", "g", True, {}),))
FAIL = ContractResult("fail", "c", (CheckResult("grid", "g", False, {"forbidden_active": [14]}),))
NA = ContractResult("not_applicable", None)
UNDECIDED = ContractResult("uncertain", "c", (CheckResult("element_exists", "e", None,
                                                          {"undecided": "missing evidence: no DOM snapshot"}),
                                              CheckResult("url_matches", "u", True, {})))


def J(v):
    return Judge("gpt-x", v, 0.9, 0.8, ("looks right",), True)


@pytest.mark.parametrize("det,judge,final,reason", [
    (PASS, J("pass"), "pass", "agreement"),
    (FAIL, J("fail"), "fail", "agreement"),
    (PASS, J("fail"), "uncertain", "judge_disagreement"),
    (FAIL, J("pass"), "uncertain", "judge_disagreement"),
    (PASS, None, "pass", "contract_only"),
    (NA, J("fail"), "fail", "judge_only"),
    (NA, None, "unknown", "no_verdict"),
    (UNDECIDED, J("pass"), "pass", "judge_only"),
    (UNDECIDED, J("fail"), "fail", "judge_only"),
    (UNDECIDED, None, "uncertain", "contract_undecided"),
])
def test_verdict_table(det, judge, final, reason):
    v = decide(det, judge, None, claimed_success=True)
    assert (v.final, v.reason) == (final, reason)
    if reason in ("contract_only", "judge_only"):
        assert v.confidence < decide(PASS, J("pass"), None, True).confidence


def test_false_claim_and_lesson_promotion():
    near_miss = decide(FAIL, J("pass"), None, claimed_success=True)
    assert near_miss.final == "uncertain" and near_miss.false_claim and not near_miss.lesson_promotable
    assert "forbidden_active=[14]" in near_miss.lesson and "gpt-x" in near_miss.lesson
    assert decide(FAIL, J("fail"), None, True).lesson_promotable
    assert decide(FAIL, None, None, True).lesson_promotable
    assert not decide(NA, J("fail"), None, True).lesson_promotable  # no contract failed
    assert decide(PASS, J("pass"), None, True).lesson_promotable and not decide(PASS, J("pass"), None, True).false_claim
    assert not decide(FAIL, J("fail"), None, claimed_success=False).false_claim
    assert decide(NA, None, None, True).false_claim is False  # unknown is not a false claim


def test_recorded_judge_wins_and_the_reference_judge_is_kept_beside():
    ref = Judge("reference-phash", "fail", 0.5, 0.6, (), False)
    judge, other = choose_judges(J("pass"), ref)
    assert judge.model == "gpt-x" and other is ref
    assert choose_judges(None, ref) == (ref, None)


def test_an_undecided_contract_decides_nothing_and_accuses_no_claim():
    """The evaluator, the evidence referee and the no-answer rule decide as if the contract were absent; when
    none does, the run is uncertain and a claim of success is not called false."""
    from trajcheck.analyzers.evidence import EvidenceVerdict

    for evaluator in ("pass", "fail"):
        v = decide(UNDECIDED, None, None, True, evaluator=evaluator)
        assert (v.final, v.reason, v.source) == (evaluator, "evaluator_only", "evaluator")
        assert v.false_claim is (evaluator == "fail")
    v = decide(UNDECIDED, None, None, claimed_success=True)
    assert (v.final, v.reason, v.false_claim, v.false_claim_basis) == ("uncertain", "contract_undecided", False, None)
    assert not v.lesson_promotable and v.det_verdict == "uncertain"
    ev = EvidenceVerdict("pass", (), 0.6)
    assert decide(UNDECIDED, None, None, True, ev).final == decide(NA, None, None, True, ev).final == "pass"
    assert decide(UNDECIDED, None, None, False, no_answer=True, ends="answer").final == "fail"
    # where the harness may stop a run itself, an undecided contract stays uncertain, not unknown
    assert decide(UNDECIDED, None, None, False, no_answer=True, ends="external").reason == "contract_undecided"
