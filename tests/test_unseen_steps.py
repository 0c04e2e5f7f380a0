"""Issue 48, item 2: missing evidence stays missing. A screen check that does not find its text where some steps
have no screenshot after them is undecided, and says how many; a TYPE action the harness ran is evidence that the
text was typed where no screenshot shows the field; a check on a final frame that actions came after is undecided,
and the ledger, ``timeline`` and the report say how many actions the last screenshot missed.

The runs are the sample run ``nc-profile-toast`` (a real Chromium recording: click the name field, select it, type
"Jane Doe", click Save, DONE; a toast "Profile saved" after the save) without its DOM snapshots, with screenshots
taken away as the harnesses that skip them do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.analyzers.contract import ContractState, evaluate
from trajcheck.analyzers.screencheck import ScreenEvidence, ScreenView
from trajcheck.analyzers.screentext import TextLine
from trajcheck.analyzers.unseen import actions_after, taken_at, typed_unseen, unseen_steps
from trajcheck.base.box import Box
from trajcheck.cli.main import app
from trajcheck.media import ocr
from trajcheck.media.contractread import ContractReads
from trajcheck.media.screenread import ScreenPlan
from trajcheck.schemas.records import Action, Step

from conftest import copy_samples, read_steps, write_steps

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")


def step(i: int, kind: str = "CLICK", pre: str | None = None, post: str | None = None, text: str | None = None,
         shared: bool = False, ok: bool | None = True) -> Step:
    return Step(i, Action(kind, text=text), frame_pre=pre, frame_post=post, executor_ok=ok,
                extra={"shared_frames": True} if shared else {})


# -- which states no screenshot shows (pure) --------------------------------------------------------------------

def test_a_step_is_seen_by_its_post_frame_or_by_the_next_steps_pre_frame():
    both = [step(1, pre="a", post="b"), step(2, pre="b", post="c"), step(3, "DONE", pre="c", post="c")]
    assert unseen_steps(both, {"a", "b", "c"}) == (0, 2)  # the DONE changes nothing: not counted
    assert actions_after(both, {"a", "b", "c"}) == 0
    # a harness that screenshots only before each action: the next step's pre frame is the screen after
    before_only = [step(1, pre="a"), step(2, pre="b"), step(3, "DONE", pre="c")]
    assert unseen_steps(before_only, {"a", "b", "c"}) == (0, 2)
    assert actions_after(before_only, {"a", "b", "c"}) == 0
    assert actions_after(before_only[:2], {"a", "b"}) == 1  # its last action: nothing after it
    # a screenshot the log names but that cannot be read shows nothing
    assert unseen_steps(both, {"a", "c"}) == (1, 2) and actions_after(both, {"a"}) == 2
    assert actions_after(both, set()) is None  # no screenshot at all: nothing to be after


def test_a_batch_of_actions_between_two_screenshots_shows_only_the_state_after_the_batch():
    # the vendor transcripts: the batch's frame pair goes to one of its steps (here the second), the others share
    batch = [step(0, shared=True), step(1, pre="a", post="b"), step(2, "TYPE", text="x", shared=True),
             step(3, pre="b", post="c"), step(4, "DONE", pre="c", post="c")]
    assert unseen_steps(batch, {"a", "b", "c"}) == (2, 4)
    assert actions_after(batch, {"a", "b", "c"}) == 0
    # a final answer given the last frame the transcript holds, when the last batch had no screenshot after it:
    # that frame was taken before the batch, so its two actions came after it
    tail = [step(0, pre="a", post="b"), step(1, pre="b"), step(2, shared=True), step(3, "DONE", pre="b", post="b")]
    assert taken_at(tail, {"a", "b"}) == {"a": -0.5, "b": 0.5}
    assert actions_after(tail, {"a", "b"}) == 2
    # the batch's screenshot after covers its trailing steps
    trailing = [step(0, pre="a", post="b"), step(1, shared=True), step(2, "DONE", pre="b", post="b")]
    assert actions_after(trailing, {"a", "b"}) == 0


def test_typed_text_counts_only_where_no_screenshot_shows_the_field_and_no_error_was_recorded():
    steps = [step(1, pre="a", post="b"), step(2, "TYPE", text="seen", pre="b", post="c"),
             step(3, "TYPE", text="unseen"), step(4, "TYPE", text="failed", ok=False), step(5, "TYPE", text="x")]
    assert typed_unseen(steps, {"a", "b", "c"}) == ((3, "unseen"), (5, "x"))


# -- what the checks decide (pure) ------------------------------------------------------------------------------

FORM = ScreenView("after step 1", "f.png", Box(0, 0, 9, 9), (TextLine("Your answers", 0.95, Box(0, 0, 9, 9)),))


def check(chk: dict[str, Any], ev: ScreenEvidence):
    res = evaluate({"checks": [chk]}, ContractState(screen={1: ev}))
    return res.checks[0]


def _reads(*checks: dict[str, Any]) -> ContractReads:
    """What a run's screen checks read, each having read ``FORM`` (as the loading stage fills it)."""
    cr = ContractReads(list(enumerate(checks, start=1)), ScreenPlan("auto", []))
    cr.views = {pos: [FORM] for pos in range(1, len(checks) + 1)}
    return cr


def test_a_check_on_any_frame_that_misses_its_text_where_steps_went_unseen_is_undecided():
    gap = "missing evidence: 15 of 21 actions have no screenshot after them"
    checks = ({"type": "text_present", "text": "Order placed", "frame": "any"},
              {"type": "text_matches", "pattern": "Order placed", "frame": "any"},
              {"type": "text_absent", "text": "Order placed", "frame": "any"},
              {"type": "text_present", "text": "answers", "frame": "any"},
              {"type": "text_present", "text": "Order placed"})
    got = _reads(*checks).evidence(unseen=(15, 21))
    results = [check(chk, got[i]) for i, chk in enumerate(checks, start=1)]
    assert [c.passed for c in results] == [None, None, None, True, False]
    assert [c.evidence.get("undecided") for c in results[:3]] == [gap] * 3
    # every state seen: absence on the frames is shown
    got = _reads(*checks).evidence(unseen=(0, 21))
    assert [check(chk, got[i]).passed for i, chk in enumerate(checks, start=1)] == [False, False, True, True, False]


def test_a_typed_text_passes_a_check_on_any_frame_and_nothing_else():
    typed = ((7, "Ada Lovelace\n"), (9, "1815-12-10"))
    ev = ScreenEvidence((FORM,), "2 of 9 actions have no screenshot after them", typed=typed)
    c = check({"type": "text_present", "text": "ada lovelace", "frame": "any"}, ev)
    assert c.passed is True and c.evidence["source"] == "typed" and c.evidence["step"] == 7
    assert "typed it at step 7" in c.evidence["evidence_of"] and "reached" in c.evidence["evidence_of"]
    c = check({"type": "text_matches", "pattern": r"\d{4}-12-\d\d", "frame": "any"}, ev)
    assert c.passed is True and c.evidence["step"] == 9
    # typing a text is no evidence of its absence, nor of the final state (it may have been cleared since)
    assert check({"type": "text_absent", "text": "Ada Lovelace", "frame": "any"}, ev).passed is None
    assert check({"type": "text_present", "text": "Ada Lovelace"}, ev).passed is not True
    assert check({"type": "text_present", "text": "Grace Hopper", "frame": "any"}, ev).passed is None
    # with OCR off (nothing read), the typed text still decides
    off = ScreenEvidence((), "screen text not read (--ocr off)", typed=typed)
    assert check({"type": "text_present", "text": "Ada Lovelace", "frame": "any"}, off).passed is True


def test_a_final_frame_that_actions_came_after_decides_nothing():
    stale = "1 action after the last screenshot: the final state was not seen"
    shown = ScreenView("final", "f.png", Box(0, 0, 9, 9), (TextLine("Draft saved", 0.95, Box(0, 0, 9, 9)),))
    for chk in ({"type": "text_present", "text": "Draft saved"}, {"type": "text_absent", "text": "Message sent"},
                {"type": "text_present", "text": "Message sent"}):
        c = check(chk, ScreenEvidence((shown,), stale=stale))
        assert c.passed is None and c.evidence["undecided"] == f"missing evidence: {stale}"
    c = check({"type": "text_present", "text": "Draft saved"}, ScreenEvidence((shown,), stale=stale))
    assert c.evidence["box"] == [0, 0, 9, 9]  # what the stale frame showed is still said


# -- end to end -------------------------------------------------------------------------------------------------

def _run(tmp_path: Path, checks: list[dict[str, Any]], edit: Any) -> dict[str, Any]:
    """nc-profile-toast without its DOM and evaluator, with ``checks`` as its contract and its steps edited by
    ``edit`` (a function of the steps list), scored with OCR; its runs row."""
    runs = copy_samples(tmp_path / "runs", dom=False, evaluator=False, only="nc-profile-toast",
                        contract={"format": "trajcheck.contract/1", "checks": checks})
    run_dir = runs / "nc-profile-toast"
    write_steps(run_dir, edit(read_steps(run_dir)))
    trajcheck.score([runs], tmp_path / "ledger", jobs=1, ocr="auto")
    return trajcheck.query(tmp_path / "ledger", "select * from runs").to_json()[0]


def _no_screens_after(steps: list[dict[str, Any]], *indices: int) -> list[dict[str, Any]]:
    """No screenshot after the steps of ``indices``: their post frames, and the next steps' pre frames, removed."""
    for s in steps:
        if s["index"] in indices:
            s["frames"].pop("post", None)
        if s["index"] - 1 in indices:
            s["frames"].pop("pre", None)
    return steps


@pytest.mark.slow
@needs_ocr
def test_screenshots_that_skip_the_steps_that_showed_a_text_leave_the_check_undecided(tmp_path):
    """The toast "Profile saved" shows after step 4; with no screenshot after steps 3 and 4, no frame that exists
    shows it, and the check is undecided (before: failed, a true success accused); the TYPE of step 3 passes the
    check that the name was typed, which no remaining frame shows either (frame 1 shows the old "Jane D.")."""
    checks = [{"type": "text_present", "text": "Profile saved", "frame": "any"},
              {"type": "text_present", "text": "Jane Doe", "frame": "any"},
              {"type": "text_present", "text": "Europe/Paris", "frame": "any"},
              {"type": "text_present", "text": "Europe/Lisbon", "frame": "any"}]

    def edit(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        steps = _no_screens_after(steps, 3, 4)
        # two more answers typed with no screenshot after them, the second refused by the executor
        extra = [{"index": 6, "action": {"type": "TYPE", "text": "Europe/Paris"}, "executor": {"ok": True}},
                 {"index": 7, "action": {"type": "TYPE", "text": "Europe/Lisbon"},
                  "executor": {"ok": False, "error": "element not interactable"}}]
        done = steps.pop()
        done["index"], done["frames"] = 8, {}  # the toast's frames: gone with the others
        return steps + extra + [done]

    row = _run(tmp_path, checks, edit)
    got = json.loads(row["contract_checks"])
    assert got[0]["passed"] is None, got[0]
    assert got[0]["evidence"]["undecided"] == "missing evidence: 4 of 6 actions have no screenshot after them"
    assert got[1]["passed"] is True and got[1]["evidence"]["source"] == "typed" and got[1]["evidence"]["step"] == 3
    assert got[2]["passed"] is True and got[2]["evidence"]["step"] == 6
    assert got[3]["passed"] is None  # the executor refused it: not typed, and not shown either
    assert row["det_verdict"] == "uncertain" and row["eval_final_verdict"] != "fail"
    assert row["actions_after_last_frame"] == 4  # the last screenshot is frame 3, before steps 3, 4, 6 and 7


@pytest.mark.slow
@needs_ocr
def test_a_check_on_any_frame_reads_the_pre_frames_of_a_log_that_screenshots_before_each_action(tmp_path):
    """With only pre frames, the screen after a step is the next step's pre frame: "Profile saved" shows in
    the DONE step's pre frame (before: only the first frame was read, and the check failed)."""
    def edit(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for s in steps:
            s["frames"].pop("post")
        return steps

    row = _run(tmp_path, [{"type": "text_present", "text": "Profile saved", "frame": "any"},
                          {"type": "text_present", "text": "Profile saved"}], edit)
    got = json.loads(row["contract_checks"])
    assert [c["passed"] for c in got] == [True, True], got
    assert got[0]["evidence"]["frame"] == "before step 5" and row["actions_after_last_frame"] == 0


@pytest.mark.slow
@needs_ocr
def test_a_final_frame_taken_before_the_last_action_decides_no_final_check(tmp_path):
    """The DONE step given the frame before the save click (as a transcript gives its answer the last frame it
    holds): the form shows there and the toast does not, but the save came after it. Before, both checks passed
    on a state that was not the last."""
    def edit(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        steps[3]["frames"].pop("post")
        steps[4]["frames"] = {"pre": "frames/004.png", "post": "frames/004.png"}
        return steps

    row = _run(tmp_path, [{"type": "text_present", "text": "Your profile"},
                          {"type": "text_absent", "text": "Profile saved"}], edit)
    got = json.loads(row["contract_checks"])
    stale = "missing evidence: 1 action after the last screenshot: the final state was not seen"
    assert [(c["passed"], c["evidence"]["undecided"]) for c in got] == [(None, stale), (None, stale)]
    assert got[0]["evidence"]["frame"] == "final" and "box" in got[0]["evidence"]  # what it showed is said
    assert row["actions_after_last_frame"] == 1 and row["det_verdict"] == "uncertain"
    res = CliRunner().invoke(app, ["timeline", str(tmp_path / "ledger"), "nc-profile-toast"])
    assert res.exit_code == 0, res.output
    assert "1 action after the last screenshot: the final state was not seen" in res.output
    html = tmp_path / "report"
    res = CliRunner().invoke(app, ["report", str(tmp_path / "ledger"), "--out", str(html)])
    assert res.exit_code == 0, res.output
    pages = "".join(p.read_text() for p in html.rglob("*.html"))
    assert "1 action(s) after the last screenshot: the final state was not seen" in pages
