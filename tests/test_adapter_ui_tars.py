"""The ui-tars reader: a session log recorded in Chromium (tests/fixtures/ui_tars, by
tests/fixtures/anthropic/make_fixtures.py) and UI-TARS's action grammar."""

from __future__ import annotations

import json
import shutil

import pytest

from trajcheck import discovery
from trajcheck.adapters import ALL
from trajcheck.adapters.ui_tars import claims, map_action, parse_reply
from trajcheck.pipeline import score_paths

from conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "ui_tars" / "workspace"


@pytest.fixture(autouse=True)
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def test_session_log_steps_points_and_verdicts():
    [r] = score_paths([FIX], jobs=1).results
    assert (r.run["source_format"], r.run["status"], r.run["goal"]) == (
        "ui-tars", "ok", "Create a workspace named 'Design team'.")
    rows = [(s["action_type"], s["effect_high_risk"], s["action_effect_observed"]) for s in r.steps]
    assert rows == [("CLICK", True, False),  # Submit is disabled: nothing happens
                    ("CLICK", False, None),  # the terms box (from parsed_action)
                    ("CLICK", True, True),  # Submit again: the workspace is created
                    ("DONE", False, None)]
    session = json.loads((FIX / "session.json").read_text())
    # relative (0-999) coordinates scaled to the 1280x800 screen
    rel = session["steps"][0]["response"].split("(")[-1].split(")")[0].split(",")
    assert (r.steps[0]["action_x"], r.steps[0]["action_y"]) == (round(int(rel[0]) * 1.28, 1), round(int(rel[1]) * 0.8, 1))
    assert r.steps[0]["reasoning"].startswith("The name is filled in")
    assert r.steps[3]["action_text"] == "Created the workspace Design team."
    assert r.run["claimed_success"] is True


def test_relative_coordinates_without_a_screen_are_dropped_with_a_warning(tmp_path):
    d = tmp_path / "noscreen"
    shutil.copytree(FIX, d)
    data = json.loads((d / "session.json").read_text())
    del data["screen"]
    (d / "session.json").write_text(json.dumps(data))
    [r] = score_paths([d], jobs=1).results
    assert any(w.endswith("[screen_unknown]") for w in r.run["warnings"])
    assert r.steps[0]["action_x"] is None and r.steps[0]["effect_point"] == "none"


@pytest.mark.parametrize("reply,kind,field,value", [
    ("Thought: go\nAction: click(start_box='<|box_start|>(500,500)<|box_end|>')", "CLICK", "x", 640.0),
    ("Action: left_double(start_box='(100,200,300,400)')", "DOUBLE_CLICK", "y", 240.0),  # a box: its centre
    ("Action: hotkey(key='ctrl c')", "KEY_PRESS", "keys", "ctrl+c"),
    ("Action: type(content='hello\\n')", "TYPE", "text", "hello\n"),
    ("Action: drag(start_box='(10,10)', end_box='(500,250)')", "DRAG", "x", 640.0),
    ("Action: scroll(start_box='(500,500)', direction='down')", "SCROLL", "x", 640.0),
    ("Action: finished(content='done')", "DONE", "text", "done"),
    ("Action: wait()", "WAIT", "x", None),
])
def test_the_action_grammar(reply, kind, field, value):
    thought, call = parse_reply(reply)
    a = map_action(*call, (1.28, 0.8))
    assert a.type == kind and getattr(a, field) == value
    if kind == "TYPE":
        assert a.extra["then_enter"] is True  # a trailing newline submits: high-risk (typed_submit)


def test_an_unparseable_reply_and_what_is_claimed():
    assert parse_reply("Thought: hmm\nAction: click(start_box=") == ("hmm", None)
    assert claims(FIX)
    assert not claims(ROOT / "tests" / "fixtures" / "openai" / "cua-newsletter")
    assert not claims(ROOT / "tests" / "fixtures" / "anthropic" / "feedback-2x")
