"""Issue 48, item 2: a text typed over several TYPE steps into one field ("Jane", then " Doe"), where no screenshot
after the last of them shows the field, leaves a check of that text undecided, with the steps named: one TYPE of the
whole text passes it, but whether each of several TYPEs added to the field or replaced it (a harness that fills a
field) is not in the log. The TYPEs are joined only when nothing that may move the focus (a click, a key, a scroll)
or a failed TYPE comes between them."""

from __future__ import annotations

import json
from typing import Any

import trajcheck
from trajcheck.analyzers.contract import ContractState, evaluate
from trajcheck.analyzers.screencheck import ScreenEvidence
from trajcheck.analyzers.unseen import typed_together
from trajcheck.schemas.records import Action, Step

from conftest import copy_samples, read_steps, write_steps


def step(i: int, kind: str = "TYPE", text: str | None = None, pre: str | None = None, post: str | None = None,
         ok: bool = True) -> Step:
    return Step(i, Action(kind, text=text), frame_pre=pre, frame_post=post, executor_ok=ok)


def test_consecutive_types_into_one_field_are_joined_as_the_field_holds_them():
    steps = [step(1, "CLICK", pre="a", post="b"), step(2, text="Jane"), step(3, text=" Doe"), step(4, "WAIT"),
             step(5, text="!"), step(6, "CLICK"), step(7, text="12 Elm"), step(8, "KEY_PRESS"), step(9, text="St")]
    assert typed_together(steps, {"a", "b"}) == ((2, 5, "Jane Doe!"),)  # a wait moves no focus; a click, a key do
    # a screenshot after the last TYPE shows the field: the screen decides, not the TYPEs
    seen = [step(1, text="Jane", pre="a"), step(2, text=" Doe", post="b")]
    assert typed_together(seen, {"a", "b"}) == ()
    assert typed_together([step(1, text="Jane", pre="a", post="b"), step(2, text=" Doe")], {"a", "b"}) == \
        ((1, 2, "Jane Doe"),)  # a screenshot after the first shows only part of the text
    # a failed TYPE typed nothing and ends the group; a newline submits the field
    assert typed_together([step(1, text="Ja"), step(2, text="ne", ok=False), step(3, text=" Doe")], set()) == ()
    assert typed_together([step(1, text="Jane\n"), step(2, text=" Doe")], set()) == ()


def _check(chk: dict[str, Any], together: tuple[tuple[int, int, str], ...]):
    ev = ScreenEvidence((), "screen text not read (--ocr off)", typed=((2, "Jane"), (3, " Doe")),
                        typed_together=together)
    return evaluate({"checks": [chk]}, ContractState(screen={1: ev})).checks[0]


def test_a_text_typed_over_several_types_leaves_a_check_on_any_frame_undecided_naming_them():
    chk = {"type": "text_present", "text": "Jane Doe", "frame": "any"}
    assert _check(chk, ()).passed is None and "last_step" not in _check(chk, ()).evidence  # no one TYPE holds it
    c = _check(chk, ((2, 3, "Jane Doe"),))
    assert c.passed is None and (c.evidence["step"], c.evidence["last_step"]) == (2, 3)
    assert "typed only over steps 2 to 3" in c.evidence["undecided"] and "replaced" in c.evidence["undecided"]
    pattern = _check({"type": "text_matches", "pattern": r"Jane\s+Doe", "frame": "any"}, ((2, 3, "Jane Doe"),))
    assert pattern.passed is None and pattern.evidence["last_step"] == 3
    # one TYPE of the whole text passes it
    one = evaluate({"checks": [chk]}, ContractState(screen={1: ScreenEvidence(
        (), "screen text not read (--ocr off)", typed=((2, "Jane Doe"),))})).checks[0]
    assert one.passed is True and one.evidence["step"] == 2
    assert _check({"type": "text_absent", "text": "Jane Doe", "frame": "any"}, ((2, 3, "Jane Doe"),)).passed is None
    assert _check({"type": "text_present", "text": "Jane Doe"}, ((2, 3, "Jane Doe"),)).passed is None  # final frame


def test_a_run_that_types_a_name_in_two_steps_without_a_screenshot_after_them(tmp_path):
    """nc-profile-toast with its TYPE "Jane Doe" split into "Jane" and " Doe", and no screenshot after them nor
    after the save; OCR off, so only the TYPEs can say the name was entered."""
    runs = copy_samples(tmp_path / "runs", dom=False, evaluator=False, only="nc-profile-toast",
                        contract={"format": "trajcheck.contract/1",
                                  "checks": [{"type": "text_present", "text": "Jane Doe", "frame": "any"}]})
    run = runs / "nc-profile-toast"
    steps = read_steps(run)
    assert steps[2]["action"] == {"type": "TYPE", "text": "Jane Doe"}
    second = json.loads(json.dumps(steps[2]))
    steps[2]["action"]["text"], second["action"]["text"] = "Jane", " Doe"
    steps[2]["frames"], second["frames"] = {"pre": "frames/003.png"}, {}
    steps[3]["frames"], steps[4]["frames"] = {}, {}
    steps = [*steps[:3], second, *steps[3:]]
    for k, s in enumerate(steps, start=1):
        s["index"] = k
    write_steps(run, steps)
    trajcheck.score([runs], tmp_path / "ledger", jobs=1, ocr="off")
    got = json.loads(trajcheck.query(tmp_path / "ledger", "select contract_checks from runs").to_json()[0]
                     ["contract_checks"])
    assert got[0]["passed"] is None, got  # undecided, not failed and not passed
    assert got[0]["evidence"]["source"] == "typed" and (got[0]["evidence"]["step"], got[0]["evidence"]["last_step"]) \
        == (3, 4)
