"""The failure modes, sharpened (issue 51, item 4): a message that appears after the decisive action, even
briefly, is the application saying no; error text on dark pages; several sub-kinds; a failed contract check
linked to the step that caused it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajcheck.analyzers.evidence import StepEvidence
from trajcheck.analyzers.failuremodes import FailureFacts, classify, flashed, refusal
from trajcheck.analyzers.messages import PageMessages
from trajcheck.base.reasons import FailureMode as M

from conftest import read_steps, run_json, write_steps

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
