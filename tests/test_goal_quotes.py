"""Issue 48, item 4: the task's own words are not evidence. Lines on the screen that quote the goal (a harness
window showing the instruction) are left out of the screen checks, with a note in the check's evidence; a
message that shares words with the goal is not a quote and still counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

import trajcheck
from trajcheck.analyzers.contract import ContractState, evaluate
from trajcheck.analyzers.screencheck import ScreenEvidence, ScreenView, goal_quotes
from trajcheck.analyzers.screentext import TextLine
from trajcheck.base.box import Box
from trajcheck.media import ocr

from conftest import copy_samples

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")

GOAL = "Change the Tasklane display name to 'Jane Doe' and save it."


@pytest.mark.parametrize("lines, quoting", [
    # the instruction, wrapped over two lines, one with a label before it
    (("Task: Change the Tasklane display name", "to 'Jane Doe' and save it."), {0, 1}),
    (("Change the Tasklane dispIay name to 'Jane Doe'",), {0}),  # a letter misread
    (("Change the Tasklane display name to 'Jane Doe' and save it.",), {0}),
    # what the page says after the task was done, in words the goal uses too
    (("Display name changed to Jane Doe",), set()),
    (("Profile saved. Your new display name is", "visible to your team."), set()),
    (("Jane Doe",), set()),  # the name typed in its field
    (("Display name", "Jane Doe"), set()),  # a label above a field: 4 words, not the goal on the screen
    (("Change the Tasklane", "Your profile", "display name to"), set()),  # fragments apart
])
def test_which_lines_quote_the_goal(lines, quoting):
    assert set(goal_quotes(lines, GOAL)) == quoting


def test_a_short_goal_shown_whole_is_a_quote_and_no_goal_quotes_nothing():
    assert goal_quotes(("Open the Settings app",), "Open the Settings app") == frozenset({0})
    assert goal_quotes(("Open Settings app",), "Open the Settings app") == frozenset()  # a word between: 2 of 3
    assert goal_quotes(("Settings",), "Open the Settings app") == frozenset()
    assert goal_quotes(("Open the Settings app",), None) == frozenset()
    assert goal_quotes(("Open it",), "Open it") == frozenset()  # under 3 words: nothing to tell a quote by


def _view(*texts: str) -> ScreenEvidence:
    lines = tuple(TextLine(t, 0.95, Box(10, 20 * i, 300, 20 * i + 15)) for i, t in enumerate(texts))
    return ScreenEvidence((ScreenView("after step 0", "f.png", Box(0, 0, 1280, 800), lines),), goal=GOAL)


def test_a_check_leaves_out_the_lines_that_quote_the_goal_and_says_so():
    ev = _view("Task: Change the Tasklane display name", "to 'Jane Doe' and save it.", "Your profile", "Jane D.")
    res = evaluate({"checks": [{"type": "text_present", "text": "save it"},
                               {"type": "text_absent", "text": "Jane Doe"},
                               {"type": "text_present", "text": "Your profile"}]}, ContractState(screen={1: ev, 2: ev,
                                                                                                      3: ev}))
    # "save it" is only in the quote: undecided, never passed on the task's words nor failed for want of them;
    # "Jane D." reads almost like "Jane Doe"
    assert [c.passed for c in res.checks] == [None, None, True]
    assert res.checks[0].evidence["undecided"] == ("missing evidence: the text is on the screen only in lines that "
                                                   "quote the goal")
    assert {c.evidence["note"] for c in res.checks} == {"2 lines that quote the goal left out"}


def test_a_label_that_echoes_the_goal_under_a_heading_that_quotes_it_is_not_failed():
    """A form's heading and label echo the task ("Create a workspace" above "Workspace name" for "Create a workspace
    named 'Design team'."): taken together as the goal on the screen, they are left out, and a check of the label
    is undecided, not failed (the text is there; whose words they are cannot be told)."""
    lines = (TextLine("Create a workspace", 0.95, Box(40, 60, 300, 80)),
             TextLine("Workspace name", 0.95, Box(40, 100, 220, 118)),
             TextLine("Create", 0.95, Box(40, 300, 120, 318)))
    ev = ScreenEvidence((ScreenView("final", "f.png", Box(0, 0, 1280, 800), lines),),
                        goal="Create a workspace named 'Design team'.")
    res = evaluate({"checks": [{"type": "text_present", "text": "Workspace name"},
                               {"type": "text_present", "text": "Billing"}]}, ContractState(screen={1: ev, 2: ev}))
    assert [c.passed for c in res.checks] == [None, False]


def test_words_read_within_a_quote_and_a_quote_read_again_are_left_out_too():
    """A fallback pass reads a window's words alone ("Change", at the quote's place) or a line again at twice its
    size, after the page's lines: they are the quote too."""
    lines = (TextLine("Change the Tasklane", 0.95, Box(320, 540, 560, 560)),
             TextLine("display name to 'Jane Doe'", 0.95, Box(320, 580, 620, 600)),
             TextLine("Your profile", 0.97, Box(330, 80, 470, 105)),
             TextLine("Change", 0.97, Box(320, 541, 400, 559)),  # within the first line's box
             TextLine("Change the Tasklane", 0.9, Box(320, 540, 560, 560)))  # the first line read again, alone
    c = evaluate({"checks": [{"type": "text_present", "text": "change"}]}, ContractState(screen={1: ScreenEvidence(
        (ScreenView("final", "f.png", Box(0, 0, 1280, 800), lines),), goal=GOAL)}))
    assert c.checks[0].passed is None and c.checks[0].evidence["note"] == "4 lines that quote the goal left out"


# -- end to end: a harness window showing the instruction on every frame -------------------------------------

def _instruction_window(run_dir: Path) -> None:
    """Each frame of the run with the harness's window over its blank lower half, showing the goal wrapped."""
    font = ImageFont.load_default(size=18)
    for png in sorted((run_dir / "frames").glob("*.png")):
        img = Image.open(png).convert("RGB")
        d = ImageDraw.Draw(img)
        d.rectangle((300, 520, 980, 640), fill=(255, 255, 255), outline=(90, 90, 90))
        d.text((320, 540), "Task: Change the Tasklane display name", fill=(20, 20, 20), font=font)
        d.text((320, 580), "to 'Jane Doe' and save it.", fill=(20, 20, 20), font=font)
        img.save(png)


@pytest.mark.slow
@needs_ocr
def test_the_instruction_on_the_screen_passes_no_check_and_a_success_message_still_does(tmp_path):
    """Before: "Doe" and "save it" were found on the first frame, in the instruction, and passed. Found only in the
    instruction, they are undecided: the task's words are no evidence either way."""
    checks = [{"type": "text_present", "text": "Doe", "frame": 0},
              {"type": "text_present", "text": "save it", "frame": "any"},
              {"type": "text_present", "text": "Jane Doe"},
              {"type": "text_present", "text": "Your new display name is visible"}]
    runs = copy_samples(tmp_path / "runs", dom=False, evaluator=False, only="nc-profile-toast",
                        contract={"format": "trajcheck.contract/1", "checks": checks})
    _instruction_window(runs / "nc-profile-toast")
    trajcheck.score([runs], tmp_path / "ledger", jobs=1, ocr="auto")
    row = trajcheck.query(tmp_path / "ledger", "select * from runs").to_json()[0]
    got = json.loads(row["contract_checks"])
    assert [c["passed"] for c in got] == [None, None, True, True], got
    assert re.fullmatch(r"\d+ lines that quote the goal left out", got[0]["evidence"]["note"]), got[0]
    assert "note" in got[1]["evidence"] and got[3]["evidence"]["frame"] == "final"
