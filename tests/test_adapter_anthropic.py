"""The anthropic-messages reader on transcripts with real Chromium screenshots (tests/fixtures/anthropic,
recorded by make_fixtures.py in the shapes Anthropic documents for the computer-use tool)."""

from __future__ import annotations

import json
import shutil

import pytest

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.adapters.anthropic.reader import READER, claims, map_action
from trajcheck.scoring.pipeline import score_paths

from conftest import ROOT, SAMPLES

FIX = ROOT / "tests" / "fixtures" / "anthropic"


@pytest.fixture(autouse=True)
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _score(*paths):
    res = score_paths(list(paths), jobs=1).results
    return {r.run["run_id"]: r for r in res}


def test_a_2x_capture_is_scaled_to_the_declared_display():
    r = _score(FIX / "feedback-2x")["feedback-2x"]
    assert r.run["source_format"] == "anthropic-messages" and r.run["status"] == "ok"
    assert (r.run["screen_width"], r.run["screen_height"]) == (1280, 800)  # tools[computer_20250124]
    steps = {s["step_index"]: s for s in r.steps}
    click = steps[1]
    assert (click["action_type"], click["frame_width"], click["frame_height"]) == ("CLICK", 2560, 1600)
    left, top, right, bottom = click["effect_region_box"]
    # the region is centred on the clicked point in frame pixels: twice the model's coordinate
    assert ((left + right) / 2, (top + bottom) / 2) == (2 * click["action_x"], 2 * click["action_y"])
    # the transparent widget swallowed the click: nothing changed, and the agent claimed success anyway
    assert (click["effect_high_risk"], click["action_effect_observed"]) == (True, False)
    assert steps[2]["action_type"] == "DONE" and "sent the feedback" in steps[2]["action_text"]
    assert (r.run["claimed_success"], r.run["eval_final_verdict"], r.run["false_claim"],
            r.run["false_claim_basis"]) == (True, "fail", True, "evidence")


def test_sparse_screenshots_share_a_frame_pair_and_mouse_move_then_click_is_one_click():
    r = _score(FIX / "profile-sparse")["profile-sparse"]
    rows = [(s["action_type"], s["shared_frames"], s["effect_reason"], s["executor_ok"]) for s in r.steps]
    assert rows == [
        ("WAIT", False, "not_high_risk", True),  # the first screenshot: no frame before it
        ("CLICK", True, "not_high_risk", True),  # mouse_move + left_click without a coordinate: one click
        ("KEY_PRESS", True, "not_high_risk", True),
        ("TYPE", False, "not_high_risk", True),  # the group's last acting step gets the pair
        ("WAIT", True, "not_high_risk", True),  # the screenshot that closed the group
        ("READ", True, "not_high_risk", False),  # zoom, refused by the executor
        ("CLICK", False, "content_changed_outside_region", True),  # Save: the toast
        ("DONE", False, "not_high_risk", None),
    ]
    click = r.steps[1]
    assert (click["action_x"], click["action_y"]) is not None and click["action_x"] == 640
    assert json.loads(click["extra"])["shared_frames"] is True
    assert "zoom is not supported" in r.steps[5]["executor_error"]
    typed = r.steps[3]
    assert typed["frame_pre"] == "frames/000.png" and typed["frame_post"] == "frames/001.png"
    assert typed["effect_content_changed"] is True
    assert r.steps[6]["action_effect_observed"] is True


def test_jsonl_transcripts_read_the_same(tmp_path):
    data = json.loads((FIX / "feedback-2x" / "messages.json").read_text())
    d = tmp_path / "feedback-jsonl"
    d.mkdir()
    (d / "conversation.jsonl").write_text("".join(json.dumps(m) + "\n" for m in data["messages"]))
    r = _score(d)["feedback-jsonl"]
    want = _score(FIX / "feedback-2x")["feedback-2x"]
    # without the request's tools no display is declared: a 2560x1600 capture is what the reference loop scales
    # to 1280x800 (WXGA), and the points fit the capture too, which the run says (issue 27)
    assert (r.run["screen_width"], r.run["screen_height"], r.run["coord_space"]) == (1280, 800, "screen")
    assert r.run["coord_space_source"].startswith("ambiguous")
    assert any(w.endswith("[coord_space_ambiguous]") for w in r.run["warnings"])
    assert [s["action_type"] for s in r.steps] == [s["action_type"] for s in want.steps]
    assert r.steps[1]["effect_reason"] == "no_pixel_change"


def test_jsonl_of_whole_requests_reads_the_last_one(tmp_path):
    """A loop that logs each API request whole writes one growing request per line: the last line holds
    the whole run (the first holds only its opening turn)."""
    data = json.loads((FIX / "feedback-2x" / "messages.json").read_text())
    d = tmp_path / "feedback-requests"
    shutil.copytree(FIX / "feedback-2x", d)
    (d / "messages.json").unlink()
    lines = [{**data, "messages": data["messages"][:k]} for k in (1, len(data["messages"]) // 2, len(data["messages"]))]
    (d / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    r = _score(d)["feedback-requests"]
    want = _score(FIX / "feedback-2x")["feedback-2x"]
    assert r.run["status"] == "ok", r.run["error"]
    assert len(want.steps) >= 3
    assert [s["action_type"] for s in r.steps] == [s["action_type"] for s in want.steps]
    assert (r.run["screen_width"], r.run["false_claim"]) == (1280, True)  # the request's tools were read


def test_what_the_reader_claims(tmp_path):
    assert claims(FIX / "feedback-2x") and claims(FIX / "profile-sparse")
    assert not claims(SAMPLES / "consent-overlay-on")  # a native run
    other = tmp_path / "chat"
    other.mkdir()
    (other / "log.json").write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert not claims(other)


def test_a_folder_mixing_formats_scores_into_one_ledger(tmp_path):
    mixed = tmp_path / "mixed"
    shutil.copytree(FIX / "profile-sparse", mixed / "profile-sparse")
    shutil.copytree(SAMPLES / "nc-profile-toast", mixed / "nc-profile-toast")
    res = _score(mixed)
    assert {k: v.run["source_format"] for k, v in res.items()} == {
        "profile-sparse": "anthropic-messages", "nc-profile-toast": "trajcheck.run/1"}


@pytest.mark.parametrize("inp,kind,extra", [
    ({"action": "left_click", "coordinate": [10, 20], "text": "shift"}, "CLICK", {"modifiers": "shift"}),
    ({"action": "triple_click", "coordinate": [1, 2]}, "TRIPLE_CLICK", {}),
    ({"action": "scroll", "coordinate": [5, 5], "scroll_direction": "down", "scroll_amount": 3}, "SCROLL",
     {"direction": "down", "amount": 3}),
    ({"action": "left_click_drag", "start_coordinate": [1, 1], "coordinate": [9, 9]}, "DRAG", {"start": [1.0, 1.0]}),
    ({"action": "hold_key", "text": "shift", "duration": 1}, "KEY_PRESS", {"duration": 1}),
    ({"action": "key", "text": "Return"}, "KEY_PRESS", {}),
    ({"action": "wait", "duration": 2}, "WAIT", {"duration": 2}),
    ({"action": "left_mouse_down"}, "MOUSE_DOWN", {}),
    ({"action": "cursor_position"}, "READ", {}),
])
def test_action_mapping(inp, kind, extra):
    a = map_action(inp)
    assert a.type == kind
    assert {k: a.extra[k] for k in extra} == extra
    assert READER.name == "anthropic-messages"


def test_a_high_risk_action_that_shares_its_frames_is_never_a_no_effect(tmp_path):
    """Two submits between the same two screenshots: the last gets the pair, the first is shared_frames
    (null verdict), not a no-effect of its own."""
    d = tmp_path / "two-submits"
    shutil.copytree(FIX / "profile-sparse" / "frames", d / "frames")
    img = lambda rel: {"type": "image", "source": {"type": "path", "media_type": "image/png", "path": rel}}  # noqa: E731
    use = lambda i, inp: {"type": "tool_use", "id": f"t{i}", "name": "computer", "input": inp}  # noqa: E731
    res = lambda i, *c: {"type": "tool_result", "tool_use_id": f"t{i}", "content": list(c)}  # noqa: E731
    msgs = [{"role": "user", "content": "Save the profile."},
            {"role": "assistant", "content": [use(1, {"action": "screenshot"})]},
            {"role": "user", "content": [res(1, img("frames/001.png"))]},
            {"role": "assistant", "content": [{"type": "text", "text": "Click Save to submit, then Save again."},
                                              use(2, {"action": "left_click", "coordinate": [418, 333]}),
                                              use(3, {"action": "left_click", "coordinate": [418, 333]})]},
            {"role": "user", "content": [res(2), res(3, img("frames/002.png"))]}]
    (d / "messages.json").write_text(json.dumps({"messages": msgs}))
    r = _score(d)["two-submits"]
    assert [(s["action_type"], s["shared_frames"], s["effect_reason"], s["action_effect_observed"])
            for s in r.steps] == [("WAIT", False, "not_high_risk", None),
                                  ("CLICK", True, "shared_frames", None),
                                  ("CLICK", False, "content_changed_outside_region", True)]


def _as_toolset(messages: list) -> list:
    """The transcript as Claude's current computer toolset writes it: each action a member tool of its own name
    (``computer_toolset_20260801``), with no ``action`` key."""
    out = json.loads(json.dumps(messages))
    for m in out:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_use" and b.get("name") == "computer":
                inp = dict(b["input"])
                b["name"], b["toolset_name"] = inp.pop("action"), "computer"
                b["input"] = inp
            if b.get("type") == "tool_result":
                b["toolset_name"] = "computer"
    return out


def test_the_computer_toolset_member_tools_are_read_in_full(tmp_path):
    """Issue 27: tool_use blocks named after the action (left_click, screenshot...) were read as one DONE step."""
    src = json.loads((FIX / "feedback-2x" / "messages.json").read_text())
    d = tmp_path / "toolset"
    d.mkdir()
    data = {**src, "tools": [{"type": "computer_toolset_20260801"}], "messages": _as_toolset(src["messages"])}
    (d / "messages.json").write_text(json.dumps(data))
    old, new = _score(FIX / "feedback-2x")["feedback-2x"], _score(d)["toolset"]
    keep = ("action_type", "action_x", "action_y", "frame_pre", "frame_post", "action_effect_observed")
    assert [[s[k] for k in keep] for s in new.steps] == [[s[k] for k in keep] for s in old.steps]
    assert not any("action_unparsed" in w for w in new.run["warnings"])


def test_other_tools_are_steps_and_an_unknown_tool_is_unknown_with_a_warning(tmp_path):
    src = json.loads((FIX / "feedback-2x" / "messages.json").read_text())
    msgs = src["messages"]
    msgs.insert(1, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t_b", "name": "bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "t_x", "name": "teleport", "input": {"to": "moon"}}]})
    msgs.insert(2, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t_b", "content": "a b"},
        {"type": "tool_result", "tool_use_id": "t_x", "is_error": True, "content": "Tool teleport is invalid"}]})
    d = tmp_path / "tools"
    d.mkdir()
    (d / "messages.json").write_text(json.dumps(src))
    r = _score(d)["tools"]
    types = [s["action_type"] for s in r.steps]
    assert types[:2] == ["TOOL", "UNKNOWN"] and len(types) == 5  # nothing dropped
    assert r.steps[1]["executor_ok"] is False
    assert any("tool_use 'teleport'" in w and w.endswith("[action_unparsed]") for w in r.run["warnings"])


REAL = ROOT / "tests" / "fixtures" / "real" / "anthropic"


@pytest.mark.slow
def test_logs_a_claude_harness_wrote():
    """Real event logs (provenance in the fixtures' README): every tool call a step, every screenshot found."""
    runs = _score(REAL)
    r3, r15 = runs["cs715-session-3"], runs["cs715-session-15"]
    assert (r3.run["goal"], r3.run["agent_model"]) == ("Turn on bluetooth", "claude-3-5-sonnet-20241022")
    assert [s["action_type"] for s in r3.steps] == ["TOOL", "WAIT", "CLICK", "WAIT", "CLICK", "DONE"]
    click = r3.steps[2]  # mouse_move then left_click without a coordinate: one click at the moved-to point
    assert (click["action_x"], click["action_y"]) == (211.0, 306.0) and click["frame_pre"] and click["frame_post"]
    framed = {f for r in (r3, r15) for s in r.steps for f in (s["frame_pre"], s["frame_post"]) if f}
    assert len(framed) == 4  # the 4 screenshots the logs name
    assert [s["action_type"] for s in r15.steps] == ["WAIT", "TOOL", "TOOL", "WAIT", "DONE"]
    assert r15.steps[1]["executor_ok"] is False and "Parameter error" in r15.steps[1]["executor_error"]
    assert not any("[actions_not_understood]" in w or "[frames_not_found]" in w
                   for r in (r3, r15) for w in r.run["warnings"])


def test_one_json_per_step_is_read_as_the_transcript_it_stands_for():
    """Issue 27: step_NN.json ({response, tool_output}) with step_NN.png after each step and task_001.txt: no
    reader claimed it. It reads as the same run its Messages transcript is (tests/fixtures/anthropic/claude-steps
    is made from feedback-2x by make_fixtures.py)."""
    r, want = _score(FIX / "claude-steps")["claude-steps"], _score(FIX / "feedback-2x")["feedback-2x"]
    assert r.run["goal"] == want.run["goal"] and r.run["source_format"] == "anthropic-messages"
    keep = ("action_type", "action_x", "action_y", "action_effect_observed", "effect_reason")
    assert [[s[k] for k in keep] for s in r.steps] == [[s[k] for k in keep] for s in want.steps]
    assert [(s["frame_pre"], s["frame_post"]) for s in r.steps] == [
        (None, "step_01.png"), ("step_01.png", "step_02.png"), ("step_02.png", "step_02.png")]
    # 2560x1600 captures, no declared display: the reference loop's 1280x800 target, said to be a choice
    assert (r.run["screen_width"], r.run["screen_height"]) == (1280, 800)
    assert r.run["coord_space_source"].startswith("ambiguous")
    assert (r.run["false_claim"], r.run["eval_final_verdict"]) == (True, "fail")
    assert claims(FIX / "claude-steps")


@pytest.mark.slow
def test_a_large_transcript_is_read_one_message_at_a_time(monkeypatch, tmp_path):
    """Issue 27: past STREAM_BYTES a transcript is streamed (ijson); it reads as the whole file does, and a
    broken one is still a located json_invalid (benchmarks/bench_transcript.py measures memory and speed)."""
    from trajcheck.readers.adapters.anthropic import logs as anthropic_logs
    from trajcheck.readers.kit import stream

    want = _score(FIX / "feedback-2x")["feedback-2x"]
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    streamed = []
    real = anthropic_logs.stream_items
    monkeypatch.setattr(anthropic_logs, "stream_items", lambda *a: streamed.append(a) or real(*a))
    got = _score(FIX / "feedback-2x")["feedback-2x"]
    assert streamed  # the streamed path was taken
    keep = ("action_type", "action_x", "action_y", "frame_pre", "frame_post", "action_effect_observed", "reasoning")
    assert [[s[k] for k in keep] for s in got.steps] == [[s[k] for k in keep] for s in want.steps]
    assert (got.run["screen_width"], got.run["agent_model"], got.run["goal"]) == (
        want.run["screen_width"], want.run["agent_model"], want.run["goal"])
    d = tmp_path / "cut"
    d.mkdir()
    text = (FIX / "feedback-2x" / "messages.json").read_text()
    (d / "messages.json").write_text(text[: len(text) * 3 // 4])
    bad = _score(d)["cut"]
    assert bad.run["status"] == "invalid" and "[json_invalid]" in bad.run["error"] and "messages.json" in bad.run["error"]


@pytest.mark.slow
def test_a_folder_of_session_logs_is_a_run_each(tmp_path):
    """A harness that keeps every session's log in one folder (the CS715 harness's logs/): each file is a run
    of its own, named by the file, never the first read and the rest passed over."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for sess in ("cs715-session-3", "cs715-session-15"):
        for f in (REAL / sess).iterdir():
            if f.is_dir():
                shutil.copytree(f, logs / f.name, dirs_exist_ok=True)
            else:
                shutil.copy(f, logs / f.name)
    runs = _score(tmp_path)
    assert sorted(runs) == ["logs/session_15_Basic_App_File_20250701_112824",
                            "logs/session_3_Basic_App_File_20250701_035818"]
    r3 = runs["logs/session_3_Basic_App_File_20250701_035818"]
    assert [s["action_type"] for s in r3.steps] == ["TOOL", "WAIT", "CLICK", "WAIT", "CLICK", "DONE"]
    assert r3.steps[2]["frame_post"] == "screenshots/screenshot_toolu_015CnVW2aFLNHY7fqmn4cAiu.png"
    assert all(not any("[steps_ambiguous]" in w for w in r.run["warnings"]) for r in runs.values())
    assert r3.run["run_path"].endswith("logs/session_3_Basic_App_File_20250701_035818.json")


def test_a_request_saved_at_every_step_is_one_run_read_from_the_last(tmp_path):
    """A harness that saves, at every step, the whole request so far and the response it got
    ({step, messages, response}): the folder is one run, read from its last file (natural order: 10 after 9)."""
    src = json.loads((FIX / "feedback-2x" / "messages.json").read_text())
    msgs = src["messages"]
    d = tmp_path / "t1"
    d.mkdir()
    for n, upto in ((1, 1), (2, 3), (10, 5)):  # the request before each model call, then its reply
        (d / f"{n}.json").write_text(json.dumps({"timestamp": "2025-01-01T00:00:00", "step": n, "messages":
                                                 msgs[:upto], "response": {"content": msgs[upto]["content"]}}))
    got, want = _score(d)["t1"], _score(FIX / "feedback-2x")["feedback-2x"]
    assert [s["action_type"] for s in got.steps] == [s["action_type"] for s in want.steps]
    assert got.steps[-1]["action_text"] == want.steps[-1]["action_text"]
    assert not any("[steps_ambiguous]" in w for w in got.run["warnings"])


def test_large_event_logs_and_saved_requests_are_read_whole(monkeypatch, tmp_path):
    """The shapes the stream does not cover (an event log, a request saved with its response) are read whole
    whatever their size, never read as empty."""
    from trajcheck.readers.kit import stream

    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    runs = _score(REAL / "cs715-session-3")
    assert [s["action_type"] for s in runs["cs715-session-3"].steps] == ["TOOL", "WAIT", "CLICK", "WAIT", "CLICK",
                                                                          "DONE"]
    src = json.loads((FIX / "feedback-2x" / "messages.json").read_text())["messages"]
    d = tmp_path / "saved"
    d.mkdir()
    (d / "3.json").write_text(json.dumps({"step": 3, "messages": src[:5], "response": {"content": src[5]["content"]}}))
    assert _score(d)["saved"].steps[-1]["action_type"] == "DONE"
