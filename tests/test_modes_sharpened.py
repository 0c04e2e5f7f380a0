"""The failure modes, sharpened (issue 51, item 4): a message that appears after the decisive action, even
briefly, is the application saying no; error text on dark pages; several sub-kinds; a failed contract check
linked to the step that caused it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

from trajcheck.analyzers.checklink import CheckStep, FailedCheck, link
from trajcheck.analyzers.evidence import StepEvidence
from trajcheck.analyzers.failuremodes import FailureFacts, classify, flashed, refusal
from trajcheck.analyzers import screentext as st
from trajcheck.analyzers.messages import PageMessages
from trajcheck.base.box import Box
from trajcheck.base.reasons import FailureMode as M
from trajcheck.media import ocr, ocrpolarity

from conftest import SAMPLES, copy_samples, read_steps, run_json, write_steps

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")

FIXTURES = Path(__file__).parent / "fixtures" / "modes"
FLASH = FIXTURES / "validation-flash-seen"  # recorded by sample_runs/recorder/record_flash_seen.py


def _said(*errors: str) -> PageMessages:
    return PageMessages(frozenset(errors), frozenset(), frozenset(errors))


NONE_SAID = PageMessages(frozenset(), frozenset())
URL = "https://a.example/signup"


def _steps(*, retry_changed: bool = False, message_at: str = "post") -> list[StepEvidence]:
    """Submit; WAIT; Submit again (nothing changed); DONE. The error is shown after the first Submit, in its frame
    after (``post``) or only in the WAIT's own frame before (``pre``), and gone by the end."""
    post = _said("please enter a valid email address.") if message_at == "post" else NONE_SAID
    pre = _said("please enter a valid email address.") if message_at == "pre" else NONE_SAID
    return [
        StepEvidence(1, "CLICK", high_risk=True, effect=message_at == "post", content_changed=message_at == "post",
                     url_before=URL, url_after=URL, messages_before=NONE_SAID, messages_after=post),
        StepEvidence(2, "WAIT", content_changed=True, url_before=URL, url_after=URL, messages_before=pre,
                     messages_after=NONE_SAID),
        StepEvidence(3, "CLICK", high_risk=True, effect=retry_changed, content_changed=retry_changed,
                     url_before=URL, url_after=URL, messages_before=NONE_SAID, messages_after=NONE_SAID),
        StepEvidence(4, "DONE", url_before=URL, url_after=URL, messages_before=NONE_SAID, messages_after=NONE_SAID),
    ]


DEAD = ("last_high_risk_no_effect@3: CLICK changed nothing, nor did any later step",)


def test_a_message_shown_after_a_high_risk_action_and_gone_by_the_end_is_the_application_saying_no():
    for where in ("post", "pre"):  # its frame after, or only a later frame before the next action
        steps = _steps(message_at=where)
        assert flashed(steps, 0) == {"please enter a valid email address."}
        assert refusal(steps) == (1, ("please enter a valid email address.",))
        f = classify(FailureFacts("fail", "evidence_only", True, DEAD, last_step=4, refused=refusal(steps)))
        assert (f.mode, f.detail, f.step) == (M.APP_SAID_NO, "please enter a valid email address", 1)
        assert "CLICK changed nothing" in (f.evidence or "")


def test_without_a_message_or_after_an_action_that_changed_the_page_a_dead_action_stays_one():
    quiet = [s if s.index != 1 else StepEvidence(1, "CLICK", high_risk=True, effect=False, content_changed=False,
                                                 url_before=URL, url_after=URL, messages_before=NONE_SAID,
                                                 messages_after=NONE_SAID) for s in _steps()]
    assert refusal(quiet) is None
    assert refusal(_steps(retry_changed=True)) is None  # the agent did something that changed the page since
    # a message that was on the page before the action is not its response
    before = [StepEvidence(1, "CLICK", high_risk=True, effect=True, content_changed=True, url_before=URL,
                           url_after=URL, messages_before=_said("x is invalid"), messages_after=_said("x is invalid"))]
    assert refusal(before) is None
    f = classify(FailureFacts("fail", "evidence_only", True, DEAD, last_step=4, refused=refusal(quiet)))
    assert (f.mode, f.detail) == (M.DEAD_ACTION, "CLICK")


def _scored(root: Path) -> dict:
    ledger = root.parent / (root.name + "-ledger")
    run_json("score", str(root), "--out", str(ledger))
    rows = run_json("query", str(ledger), "select run_id, failure_mode, failure_detail, failure_step, "
                    "decisive_step, decisive_kind from runs")
    return rows[0]


def test_the_recorded_run_whose_validation_message_flashes_is_app_said_no_from_dom_and_from_the_screen(tmp_path):
    """validation-flash-seen: Submit (its frame after shows "Please enter a valid email address."), WAIT (gone),
    Submit again (nothing changes), DONE. Before this change its mode was dead_action (the retry changed nothing)."""
    steps = read_steps(FLASH)
    assert [s["action"]["type"] for s in steps] == ["CLICK", "WAIT", "CLICK", "DONE"]
    dom = tmp_path / "dom"
    shutil.copytree(FLASH, dom / FLASH.name)
    r = _scored(dom)
    assert (r["failure_mode"], r["failure_detail"], r["failure_step"]) == (
        "app_said_no", "please enter a valid email address", 1)
    assert (r["decisive_step"], r["decisive_kind"]) == (1, "ignored_message")
    # screenshots only (no DOM, no contract, no evaluator): the message is read from the frame by OCR
    shot = tmp_path / "shots" / FLASH.name
    shutil.copytree(FLASH, shot, ignore=shutil.ignore_patterns("dom", "contract.json"))
    for s in steps:
        for k in ("dom_before", "dom_after"):
            s["page"].pop(k, None)
    write_steps(shot, steps)
    meta = json.loads((shot / "run.json").read_text())
    meta["outcome"] = {"status": "done"}
    (shot / "run.json").write_text(json.dumps(meta))
    r = _scored(shot.parent)
    assert (r["failure_mode"], r["failure_detail"], r["failure_step"]) == (
        "app_said_no", "please enter a valid email address", 1)


# ---- a failed contract check linked to the step that caused it ---------------------------------------------

GRID = {"type": "grid", "name": "kick row", "box": [124, 129, 922, 226], "rows": 4, "cols": 16, "target_row": 1,
        "required_steps": [1, 5, 9, 13]}


def _clicks(*points: tuple[float, float]) -> list[CheckStep]:
    return [CheckStep(i, "CLICK", p, frame_pre=f"f{i}.png", frame_post=f"f{i + 1}.png")
            for i, p in enumerate(points, start=1)] + [CheckStep(len(points) + 1, "DONE")]


def test_a_grid_check_is_linked_to_the_last_click_on_the_forbidden_cell_it_found_on():
    steps = _clicks((150, 155), (382, 155), (672, 155), (846, 155))  # cells 1, 5, 10, 13 of row 1
    bad = FailedCheck("kick row", "grid", GRID, {"forbidden_active": [10], "missing_required": [9]})
    found = link([bad], steps)
    assert found is not None and found.step == 3 and "cell 10" in found.evidence and "f3.png" in found.evidence
    # the same point in another row (snare) is not the kick row's cell 10
    assert link([bad], _clicks((150, 155), (672, 212))) is None
    # only a missing cell (an omission): no step caused it
    assert link([FailedCheck("kick row", "grid", GRID, {"forbidden_active": [], "missing_required": [9]})],
                steps) is None
    # several failed checks: the earliest step
    url = FailedCheck("u", "url_matches", {"pattern": "/x$"}, {"url": "https://a.example/"})
    moved = [CheckStep(1, "CLICK", (150, 155), url_before="https://a.example/x", url_after="https://a.example/"),
             CheckStep(2, "CLICK", (672, 155), url_before="https://a.example/", url_after="https://a.example/")]
    assert link([url, bad], moved).step == 1  # type: ignore[union-attr]  # left /x at 1; cell 10 set at 2
    assert link([bad, url], moved).step == 1  # type: ignore[union-attr]


def test_a_url_check_is_linked_to_the_step_that_left_the_wanted_page_the_run_never_came_back_to():
    u = FailedCheck("u", "url_matches", {"pattern": "/thanks$"}, {"url": "https://a.example/cart",
                                                                  "pattern": "/thanks$"})
    home, cart, thanks = "https://a.example/", "https://a.example/cart", "https://a.example/thanks"
    left = [CheckStep(1, "CLICK", url_before=home, url_after=thanks),
            CheckStep(2, "CLICK", url_before=thanks, url_after=home),
            CheckStep(3, "CLICK", url_before=home, url_after=cart),
            CheckStep(4, "DONE", url_before=cart, url_after=cart)]
    found = link([u], left)
    assert found is not None and found.step == 2 and "left a.example/thanks" in found.evidence
    # it came back to the wanted page and left again: the last departure is the one that lasted
    again = left[:3] + [CheckStep(4, "CLICK", url_before=cart, url_after=thanks),
                        CheckStep(5, "CLICK", url_before=thanks, url_after=cart), CheckStep(6, "DONE")]
    assert link([u], again).step == 5  # type: ignore[union-attr]
    # never on the wanted page (an omission): no step caused it, not even the one that arrived where it ended
    never = [CheckStep(1, "CLICK", url_before=home, url_after=cart),
             CheckStep(2, "DONE", url_before=cart, url_after=cart)]
    assert link([u], never) is None
    # a URL not recorded after the wanted page: no step is known to have left it
    unknown = [CheckStep(1, "CLICK", url_before=home, url_after=thanks), CheckStep(2, "CLICK"),
               CheckStep(3, "DONE")]
    assert link([u], unknown) is None


def test_a_correct_navigation_to_the_page_a_run_ended_on_is_not_the_decisive_error(tmp_path):
    """stale-element-recovery's step 4 opens the invoice (message.html?id=m3), as its task asks. With a contract
    that wants a page the run never reached (``m3&view=paid$``), the check fails by omission: before this change
    the click at step 4 was named the decisive error (contract_check at step 4)."""
    copy_samples(tmp_path / "runs", only="stale-element-recovery")
    contract = tmp_path / "runs" / "stale-element-recovery" / "contract.json"
    spec = json.loads(contract.read_text())
    spec["checks"][0]["pattern"] = "m3&view=paid$"
    contract.write_text(json.dumps(spec))
    r = _scored(tmp_path / "runs")
    assert r["failure_mode"] == "wrong_result"
    assert (r["decisive_step"], r["decisive_kind"]) == (None, "not_determined")  # nothing else shows a step


def test_a_text_check_is_linked_to_the_step_that_typed_the_wrong_value():
    chk = FailedCheck("qty", "element_text", {"selector": "#qty", "pattern": "^3$"}, {"texts": ["30"]})
    steps = [CheckStep(1, "CLICK", (10, 10)), CheckStep(2, "TYPE", text="30"), CheckStep(3, "TYPE", text="hello"),
             CheckStep(4, "DONE")]
    assert link([chk], steps).step == 2  # type: ignore[union-attr]
    spaced = FailedCheck("name", "element_text", {"selector": "#name", "pattern": "^Jane Doe$"},
                         {"texts": ["Jane  Doe-Smith"]})
    assert link([spaced], [CheckStep(1, "TYPE", text="Jane Doe-Smith "), CheckStep(2, "DONE")]).step == 1  # type: ignore
    absent = FailedCheck("no draft", "text_absent", {"text": "DRAFT"}, {"text": "DRAFT", "found": True})
    assert link([absent], [CheckStep(1, "TYPE", text="draft"), CheckStep(2, "DONE")]).step == 1  # type: ignore
    assert link([absent], [CheckStep(1, "TYPE", text="a DRAFT note"), CheckStep(2, "DONE")]).step == 1  # type: ignore
    assert link([absent], [CheckStep(1, "TYPE", text="final"), CheckStep(2, "DONE")]) is None


def test_a_short_typed_value_inside_the_wrong_value_is_not_its_cause():
    name = FailedCheck("name", "element_text", {"selector": "#name", "pattern": "^Jane Doe$"},
                       {"texts": ["Jane Doe-Smith"]})
    assert link([name], [CheckStep(1, "TYPE", text="a"), CheckStep(2, "DONE")]) is None
    assert link([name], [CheckStep(1, "TYPE", text="jane doe-smith"), CheckStep(2, "DONE")]) is None  # case kept
    qty = FailedCheck("qty", "element_text", {"selector": "#qty", "pattern": "^1$"}, {"texts": ["12"]})
    assert link([qty], [CheckStep(1, "TYPE", text="1"), CheckStep(2, "DONE")]) is None
    assert link([qty], [CheckStep(1, "TYPE", text="12"), CheckStep(2, "TYPE", text="1"),
                        CheckStep(3, "DONE")]).step == 1  # type: ignore[union-attr]  # the whole value, earlier
    labelled = FailedCheck("qty", "element_text", {}, {"texts": ["Quantity: 30"]})
    assert link([labelled], [CheckStep(1, "TYPE", text="30"), CheckStep(2, "DONE")]) is None
    absent = FailedCheck("no draft", "text_absent", {"text": "DRAFT"}, {"text": "DRAFT", "found": True})
    assert link([absent], [CheckStep(1, "TYPE", text="a"), CheckStep(2, "DONE")]) is None


def test_sequencer_near_miss_is_lost_at_step_3_with_its_contract_and_not_determined_without(tmp_path):
    """Step 3 clicked kick cell 10 where 9 was wanted (frames/003.png -> frames/004.png, looked at by eye): only the
    contract's grid check sees it. Before this change its decisive error was not_determined."""
    with_contract = tmp_path / "with"
    copy_samples(with_contract, only="sequencer-near-miss")
    r = _scored(with_contract)
    assert (r["failure_mode"], r["decisive_step"], r["decisive_kind"]) == ("wrong_result", 3, "contract_check")
    without = tmp_path / "without"
    copy_samples(without, only="sequencer-near-miss")
    (without / "sequencer-near-miss" / "contract.json").unlink()
    r = _scored(without)
    assert (r["decisive_step"], r["decisive_kind"]) == (None, "not_determined")


# ---- several sub-kinds ----------------------------------------------------------------------------------------


def test_a_failure_mode_keeps_every_sub_kind_its_evidence_shows_its_detail_first():
    said = classify(FailureFacts("fail", "evidence_only", True, (
        "error_after_last_high_risk@4: invalid field: email; Password is too short.; Email is invalid",), last_step=5))
    assert said.detail == "email is invalid"
    assert said.subkinds == ("email is invalid", "password is too short", "invalid field: email")
    wall = classify(FailureFacts("fail", "evidence_only", True, ("ends_blocked@2: blocking_page, captcha",)))
    assert (wall.detail, wall.subkinds) == ("captcha", ("captcha", "blocking_page"))
    loop = classify(FailureFacts("fail", "evidence_only", True, ("no_net_progress@3: back", "ends_in_loop@5: x")))
    assert (loop.detail, loop.subkinds) == ("drift_loop", ("drift_loop", "no_net_progress"))
    wrong = classify(FailureFacts("fail", "contract", True, failed_checks=(("b", "url_matches", "{}"),
                                                                          ("a", "grid", "{}")),
                                  evaluator="fail", judge="fail", answer_matches=False, last_step=3))
    assert (wrong.detail, wrong.subkinds) == ("grid", ("grid", "url_matches", "evaluator", "judge", "answer"))
    one = classify(FailureFacts("fail", "evidence", True, ("last_high_risk_no_effect@1: CLICK changed nothing",)))
    assert one.subkinds == ("CLICK",)
    assert classify(FailureFacts("pass", "contract", True)).subkinds is None  # no mode: null in the ledger


def test_failures_and_timeline_show_every_sub_kind_and_an_older_ledger_its_one_detail(sample_ledger):
    from trajcheck.queries.failuremodes import subkinds

    out = run_json("failures", str(sample_ledger))
    wrong = next(m for a in out["arms"] for m in a["modes"] if m["mode"] == "wrong_result")
    assert wrong["details"] == [{"detail": "evaluator", "count": 1}, {"detail": "grid", "count": 1}]
    assert wrong["example"]["details"] == ["grid", "evaluator"]
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "sequencer-near-miss"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "failure   wrong_result (grid; evaluator) at step 6" in res.output
    # a row of a ledger written before schema 15: failure_details is null (or absent), failure_detail is its one
    assert subkinds({"failure_detail": "captcha", "failure_details": None}) == ["captcha"]
    assert subkinds({"failure_detail": "captcha"}) == ["captcha"]
    assert subkinds({"failure_detail": None, "failure_details": None}) == []


# ---- error text on dark pages -------------------------------------------------------------------------------

DARK_FIELD = FIXTURES / "dark-field-error"  # recorded by sample_runs/recorder/record_flash_seen.py --dark-field


def _screenshots_only(src: Path, dst: Path) -> Path:
    """``src`` copied to ``dst`` without its DOM snapshots, contract and evaluator result: the screen is all."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("dom", "contract.json"))
    steps = read_steps(dst)
    for s in steps:
        for k in ("dom_before", "dom_after"):
            s["page"].pop(k, None)
    write_steps(dst, steps)
    meta = json.loads((dst / "run.json").read_text())
    meta["outcome"] = {"status": "done"}
    (dst / "run.json").write_text(json.dumps(meta))
    return dst


@needs_ocr
def test_light_error_text_on_a_dark_page_beside_light_fields_is_found(tmp_path, monkeypatch):
    """dark-field-error: Submit on a dark page brings up "Error: email is invalid" in 12 px light red and clears the
    white fields around it, so the changed region holds both grounds and its mean is light. Read in one polarity
    (as before this change: ``mixed`` never true) the error is not found and the run is not_determined; read in
    both, it is app_said_no."""
    _screenshots_only(DARK_FIELD, tmp_path / "runs" / DARK_FIELD.name)
    r = _scored(tmp_path / "runs")
    assert (r["failure_mode"], r["failure_detail"], r["failure_step"]) == ("app_said_no", "error: email is invalid", 1)
    monkeypatch.setattr(ocrpolarity, "mixed", lambda grey: False)
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache-one-polarity"))
    _screenshots_only(DARK_FIELD, tmp_path / "one" / DARK_FIELD.name)
    assert _scored(tmp_path / "one")["failure_mode"] == "not_determined"


def test_a_crop_of_both_grounds_is_mixed_and_its_light_fills_are_painted_over():
    post = np.asarray(Image.open(DARK_FIELD / "frames" / "002.png").convert("L"))
    form = post[110:250, 372:912]  # the error line between two white fields
    assert ocrpolarity.mixed(form)
    assert not ocrpolarity.mixed(post[170:196, 372:509])  # the error line alone: one (dark) ground
    painted = ocrpolarity.dark_only(form)
    assert float((painted > ocrpolarity.LIGHT).mean()) < 0.02  # the fields are gone, the light text stays
    text = form[66:80, 8:120]  # "Error: email is invalid"
    assert (painted[66:80, 8:120] == text).all()


@needs_ocr
def test_an_inverted_real_frame_reads_its_error_as_the_light_frame_does():
    """nc-server-validation's frame after Create account, inverted with Pillow (a dark theme of the same page):
    the error box is read in both, with the same words."""
    frame = np.asarray(Image.open(SAMPLES / "nc-server-validation" / "frames" / "008.png").convert("L"))
    box = Box(392, 125, 888, 210)  # the error box
    light = [x.text for x in ocr.read_lines(ENGINE, frame, box, 1.0)]
    dark = [x.text for x in ocr.read_lines(ENGINE, np.asarray(ImageOps.invert(Image.fromarray(frame))), box, 1.0)]
    assert any("Password is too short" in t for t in light)
    assert [t for t in dark if "too short" in t] == [t for t in light if "too short" in t]


def test_the_second_polarity_adds_lines_and_never_loses_one_of_the_first_read():
    def tl(text: str, box: tuple[int, int, int, int]) -> st.TextLine:
        return st.TextLine(text, 0.95, Box(*box))

    first = [tl("Password", (10, 50, 80, 60)), tl("rrect password. Try again", (20, 20, 190, 30))]
    # read whole over the line the first read lost the start of: it replaces it; a new line is added
    merged = ocrpolarity.merge(first, [tl("Incorrect password. Try again.", (5, 20, 192, 31)),
                                       tl("Error: email is invalid", (5, 70, 150, 80))])
    assert [x.text for x in merged] == ["Incorrect password. Try again.", "Password", "Error: email is invalid"]
    # a shorter or equal line over one of the first read does not replace it; nothing added: the first read as is
    assert ocrpolarity.merge(first, [tl("Pass", (10, 50, 40, 60))]) == first
