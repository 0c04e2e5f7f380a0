"""The ui-tars reader: a session log recorded in Chromium (tests/fixtures/ui_tars, by
tests/fixtures/anthropic/make_fixtures.py) and UI-TARS's action grammar."""

from __future__ import annotations

import json
import shutil

import pytest

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.adapters.ui_tars.reader import claims
from trajcheck.readers.adapters.ui_tars.actions import map_action, parse_reply
from trajcheck.scoring.pipeline import score_paths

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


def test_without_a_declared_screen_the_first_screenshot_sizes_it(tmp_path):
    """Issue 27: a relative point is scaled to the first screenshot when the log declares no screen."""
    d = tmp_path / "noscreen"
    shutil.copytree(FIX, d)
    data = json.loads((d / "session.json").read_text())
    del data["screen"]
    (d / "session.json").write_text(json.dumps(data))
    [r] = score_paths([d], jobs=1).results
    assert (r.run["screen_width"], r.run["screen_height"], r.run["coord_space"]) == (1280, 800, "relative-1000")
    assert r.run["coord_space_source"] == "declared"
    assert r.steps[0]["effect_point"] == "in_frame" and r.steps[0]["action_effect_observed"] is False


def test_relative_points_with_no_size_at_all_are_dropped_with_a_warning(tmp_path):
    d = tmp_path / "noshots"
    d.mkdir()
    (d / "session.json").write_text(json.dumps({"instruction": "x", "coordinate_space": "relative-1000", "steps": [
        {"response": "Action: click(start_box='(500,500)')"}, {"response": "Action: finished(content='ok')"}]}))
    [r] = score_paths([d], jobs=1).results
    assert any(w.endswith("[screen_unknown]") for w in r.run["warnings"])
    assert r.steps[0]["action_x"] is None and r.steps[0]["effect_point"] == "none"


MAC = ROOT / "tests" / "fixtures" / "ui_tars" / "macos-session"


def test_the_macos_harness_session_log_is_read_in_full():
    """Issue 27's first log: session_log.json with model_reply and the flat parsed_action (the point the harness
    executed, in screen pixels), screenshots named under the folder the harness wrote to but kept beside the
    log, and a reasoning.json beside it (merged into the session log, never read instead of it)."""
    [r] = score_paths([MAC], jobs=1).results
    assert r.run["status"] == "ok" and r.run["goal"] == "Create a workspace named 'Design team'."
    log = json.loads((MAC / "session_log.json").read_text())
    flat = [s["parsed_action"] for s in log["steps"]]
    assert [s["action_type"] for s in r.steps] == ["CLICK", "CLICK", "CLICK", "DONE"]
    assert [(s["action_x"], s["action_y"]) for s in r.steps[:3]] == [(float(a["x"]), float(a["y"])) for a in flat[:3]]
    assert [s["frame_pre"] for s in r.steps] == [f"step_{i:03d}.png" for i in range(4)]  # all 4 screenshots found
    assert (r.run["coord_space"], r.run["screen_width"], r.run["screen_height"]) == ("screen", 1280, 800)
    assert r.run["coord_space_source"].startswith("declared: the harness logs the point it executed")
    warns = " ".join(r.run["warnings"])
    assert "[screenshot_relocated]" in warns and warns.count("[screenshot_relocated]") == 1  # one note per folder
    assert "[steps_ambiguous]" not in warns  # reasoning.json is the session log's companion, not a rival log
    # its raw replies differ from the session log's only by the <|box_start|> tokens the harness adds: no conflict,
    # and nothing to fill
    assert "[reply_conflict]" not in warns and "[reasoning_merged]" not in warns
    assert [s["action_effect_observed"] for s in r.steps[:3]] == [False, None, True]
    assert r.run["outcome_status"] == "done" and r.run["claimed_success"] is True


def _mac_copy(tmp_path, change):
    d = tmp_path / "mac"
    shutil.copytree(MAC, d)
    log = json.loads((d / "session_log.json").read_text())
    change(log["steps"])
    (d / "session_log.json").write_text(json.dumps(log))
    return d


def test_reasoning_json_fills_the_replies_the_session_log_lacks(tmp_path):
    """Merged by step number: reasoning.json's raw_reply fills a missing or cut-short reply (and gives the step its
    action when the harness parsed none), a step only it holds is added in its place, and where both hold a reply
    and they differ, the session log's is kept with a warning naming the step."""
    def change(steps):
        del steps[0]["model_reply"], steps[0]["thought"]  # missing: the reply (and thought) come from reasoning.json
        steps[1]["model_reply"] = steps[1]["model_reply"][:30] + "..."  # cut short, and the harness parsed nothing
        steps[1]["parsed_action"] = {"type": "none"}
        del steps[2]  # only reasoning.json holds step 2
        steps[2]["model_reply"] = "Thought: Done.\nAction: finished(content='All set.')"  # step 3: they differ

    d = _mac_copy(tmp_path, change)
    [r] = score_paths([d], jobs=1).results
    side = json.loads((MAC / "reasoning.json").read_text())["steps"]
    assert [s["action_type"] for s in r.steps] == ["CLICK", "CLICK", "CLICK", "DONE"]
    assert [(s["action_x"], s["action_y"]) for s in r.steps[:3]] == [(413.0, 308.0), (380.0, 261.0), (413.0, 308.0)]
    assert r.steps[0]["reasoning"] == parse_reply(side[0]["raw_reply"])[0]  # the thought of reasoning.json's reply
    assert r.steps[3]["action_text"] == "Created the workspace Design team."  # the session log's parsed action
    merged = [w for w in r.run["warnings"] if w.endswith("[reasoning_merged]")]
    assert len(merged) == 1 and "fills the reply of steps 0, 1" in merged[0] and "adds step 2," in merged[0]
    conflict = [w for w in r.run["warnings"] if w.endswith("[reply_conflict]")]
    assert len(conflict) == 1 and "step 3:" in conflict[0] and "field steps[2]" in conflict[0]
    (d / "reasoning.json").unlink()  # without it, the same session log loses the steps reasoning.json gave
    [alone] = score_paths([d], jobs=1).results
    assert [s["action_type"] for s in alone.steps] == ["CLICK", "UNKNOWN", "DONE"]


def test_a_broken_reasoning_json_costs_the_merge_not_the_run(tmp_path):
    d = _mac_copy(tmp_path, lambda steps: steps[0].pop("model_reply"))
    (d / "reasoning.json").write_text('{"steps": [')
    [r] = score_paths([d], jobs=1).results
    assert r.run["status"] == "ok" and [s["action_type"] for s in r.steps] == ["CLICK", "CLICK", "CLICK", "DONE"]
    bad = [w for w in r.run["warnings"] if w.endswith("[json_invalid]")]
    assert len(bad) == 1 and "reasoning.json" in bad[0] and "not merged into session_log.json" in bad[0]


def test_a_reasoning_json_alone_is_the_log(tmp_path):
    d = tmp_path / "only"
    d.mkdir()
    shutil.copy(MAC / "reasoning.json", d / "reasoning.json")
    [r] = score_paths([d], jobs=1).results
    assert [s["action_type"] for s in r.steps] == ["CLICK", "CLICK", "CLICK", "DONE"]


def test_a_flat_raw_action_falls_back_to_the_reply_and_an_unreadable_one_is_unknown(tmp_path):
    d = tmp_path / "raw"
    shutil.copytree(MAC, d)
    log = json.loads((d / "session_log.json").read_text())
    log["steps"][0]["parsed_action"] = {"type": "raw", "raw": "click(start_box='(413,308)')"}
    log["steps"][1]["parsed_action"] = {"type": "none"}
    log["steps"][1]["model_reply"] = "Thought: hmm\nAction: teleport(to='moon')"
    (d / "session_log.json").write_text(json.dumps(log))
    [r] = score_paths([d], jobs=1).results
    assert [s["action_type"] for s in r.steps] == ["CLICK", "UNKNOWN", "CLICK", "DONE"]
    assert (r.steps[0]["action_x"], r.steps[0]["action_y"]) == (413.0, 308.0)
    assert any("'teleport' is not a UI-TARS action" in w and w.endswith("[action_unparsed]") for w in r.run["warnings"])


REAL = ROOT / "tests" / "fixtures" / "real" / "ui_tars" / "agent-tars-gui-basic"


@pytest.mark.slow
def test_a_log_the_agent_tars_harness_wrote():
    """A real log (provenance in the fixture's README): a JSON array under a .jsonl name, screenshots inline,
    UI-TARS's <point> grammar inside tool calls, a final answer without a tool call."""
    [r] = score_paths([REAL], jobs=1).results
    assert r.run["status"] == "ok" and r.run["goal"] == "What is Agent TARS"
    assert [s["action_type"] for s in r.steps] == ["CLICK", "TYPE", "CLICK", "DONE"]
    assert all(s["frame_pre"] and s["frame_post"] for s in r.steps)  # 4 screenshots, every step framed
    assert (r.run["screen_width"], r.run["screen_height"]) == (2560, 1600)  # the first screenshot's size
    # <point>458 525</point> on the 0-1000 grid: the "Google Search" button of the 2560x1600 capture
    assert (r.steps[2]["action_x"], r.steps[2]["action_y"]) == (1172.5, 840.0)
    assert r.run["coord_space"] == "relative-1000" and r.run["coord_space_source"].startswith("ambiguous")
    assert any(w.endswith("[coord_space_ambiguous]") for w in r.run["warnings"])
    assert r.steps[1]["action_text"] == "What is Agent TARS" and r.run["claimed_success"] is True


@pytest.mark.parametrize("reply,kind,field,value", [
    ("Thought: go\nAction: click(start_box='<|box_start|>(500,500)<|box_end|>')", "CLICK", "x", 500.0),
    ("Action: left_double(start_box='(100,200,300,400)')", "DOUBLE_CLICK", "y", 300.0),  # a box: its centre
    ("Action: click(start_box='[100, 200, 300, 400]')", "CLICK", "x", 200.0),
    ("Action: click(point='<point>200 300</point>')", "CLICK", "y", 300.0),
    ("Action: click(start_box='<bbox>637 964 639 966</bbox>')", "CLICK", "x", 638.0),
    ("Action：click(start_box='(7,8)')", "CLICK", "x", 7.0),  # the full-width colon
    ("Reflection: wrong field\nAction_Summary: retry\nAction: right_single(start_box='(1,2)')", "RIGHT_CLICK", "y", 2.0),
    ("Action: hotkey(key='ctrl c')", "KEY_PRESS", "keys", "ctrl+c"),
    ("Action: type(content='hello\\n')", "TYPE", "text", "hello\n"),
    ("Action: drag(start_point='<point>10 10</point>', end_point='<point>500 250</point>')", "DRAG", "x", 500.0),
    ("Action: scroll(start_box='(500,500)', direction='down')", "SCROLL", "x", 500.0),
    ("Action: finished(content='done')", "DONE", "text", "done"),
    ("Action: wait()", "WAIT", "x", None),
    ("Action: open_app(app_name='Settings')", "NAVIGATE", "text", "Settings"),
])
def test_the_action_grammar(reply, kind, field, value):
    _thought, calls, bad = parse_reply(reply)
    assert not bad and len(calls) == 1
    a = map_action(*calls[0])
    assert a.type == kind and getattr(a, field) == value
    if kind == "TYPE":
        assert a.extra["then_enter"] is True  # a trailing newline submits: high-risk (typed_submit)


def test_several_calls_in_one_reply_and_the_thought():
    thought, calls, bad = parse_reply("Reflection: r\nAction_Summary: type then submit\nAction: type(content='a')\n\n"
                                      "hotkey(key='enter')")
    assert thought == "r\ntype then submit" and [c[0] for c in calls] == ["type", "hotkey"] and not bad


def test_uitars_parsed_fractions_are_the_relative_grid():
    a = map_action("click", {"start_box": "[0.25, 0.5, 0.25, 0.5]"}, fractions=True)
    assert (a.x, a.y) == (250.0, 500.0)


def test_an_unparseable_reply_and_what_is_claimed():
    assert parse_reply("Thought: hmm\nAction: click(start_box=") == ("hmm", [], ["click(start_box="])
    assert claims(FIX) and claims(MAC) and claims(REAL)
    assert not claims(ROOT / "tests" / "fixtures" / "openai" / "cua-newsletter")
    assert not claims(ROOT / "tests" / "fixtures" / "anthropic" / "feedback-2x")


def test_the_report_ui_tars_desktop_exports():
    """The HTML report embeds the session (conversations, screenshots, parsed predictions with fractional
    boxes): read like the session log it was made from (tests/fixtures/ui_tars/desktop-report, make_fixtures.py)."""
    rep = ROOT / "tests" / "fixtures" / "ui_tars" / "desktop-report"
    [r] = score_paths([rep], jobs=1).results
    [want] = score_paths([FIX], jobs=1).results
    keep = ("action_type", "action_effect_observed", "effect_reason")
    assert [[s[k] for k in keep] for s in r.steps] == [[s[k] for k in keep] for s in want.steps]
    assert [(s["action_x"], s["action_y"]) for s in r.steps] == [(s["action_x"], s["action_y"]) for s in want.steps]
    assert (r.run["agent_model"], r.run["screen_width"], r.run["coord_space"]) == ("UI-TARS-1.5-7B", 1280, "relative-1000")
    assert claims(rep)


def test_reply_points_beside_flat_ones_follow_what_the_harness_did(tmp_path):
    """A run whose flat actions are executed points and whose other steps fall back to the reply: the steps that
    log both show the harness's scale (here 2x), and the reply-only points are read with it."""
    d = tmp_path / "mixed"
    shutil.copytree(MAC, d)
    log = json.loads((d / "session_log.json").read_text())
    log["steps"][0]["parsed_action"] = {"type": "click", "x": 300, "y": 400}
    log["steps"][0]["model_reply"] = "Thought: a\nAction: click(start_box='(150,200)')"
    log["steps"][1]["parsed_action"] = {"type": "raw", "raw": "?"}
    log["steps"][1]["model_reply"] = "Thought: b\nAction: click(start_box='(250,100)')"
    log["steps"][2]["parsed_action"] = {"type": "click", "x": 826, "y": 616}  # its reply says (413,308): 2x too
    (d / "session_log.json").write_text(json.dumps(log))
    [r] = score_paths([d], jobs=1).results
    assert [(s["action_x"], s["action_y"]) for s in r.steps[:2]] == [(300.0, 400.0), (500.0, 200.0)]
    assert r.run["coord_space"] == "screen"
    log["steps"][2]["parsed_action"] = {"type": "click", "x": 413, "y": 308}  # 1x here, 2x above: no one scale
    (d / "session_log.json").write_text(json.dumps(log))
    [r] = score_paths([d], jobs=1).results
    assert (r.steps[1]["action_x"], r.steps[1]["action_y"]) == (320.0, 80.0)  # decided from the reply points alone
    assert any(w.endswith("[coord_space_ambiguous]") for w in r.run["warnings"])


def test_hostile_replies_cost_linear_time():
    """Replies padded with blank lines, a huge typed text, a report of unclosed tags: each read in well under a
    second (the patterns are bounded; calls are joined once)."""
    import time

    from trajcheck.readers.adapters.ui_tars.reader import _DUMP

    t = time.perf_counter()
    parse_reply("\n" * 200_000 + "x")
    parse_reply("Thought: " + "\n" * 200_000 + "Action: click(start_box='(1,2)')")
    thought, calls, bad = parse_reply("Action: type(content='" + "a\n" * 500_000 + "')")
    list(_DUMP.finditer("<html>ui_tars_web_dump " + "<script " * 100_000))
    # a bound on a hang, not a speed target (these took minutes when quadratic; benchmarks/ measures speed)
    assert time.perf_counter() - t < 30 and len(calls) == 1 and not bad
