"""The openai-responses reader on a CUA transcript with real Chromium screenshots (tests/fixtures/openai,
recorded by tests/fixtures/anthropic/make_fixtures.py in the Responses API's shapes)."""

from __future__ import annotations

import json

import pytest

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.adapters.openai.reader import claims, map_action
from trajcheck.scoring.pipeline import score_paths

from conftest import ROOT, SAMPLES

FIX = ROOT / "tests" / "fixtures" / "openai" / "cua-newsletter"


@pytest.fixture(autouse=True)
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _one(path):
    [r] = score_paths([path], jobs=1).results
    return r


def test_cua_transcript_steps_frames_and_verdicts():
    r = _one(FIX)
    assert (r.run["source_format"], r.run["status"], r.run["screen_width"], r.run["screen_height"]) == (
        "openai-responses", "ok", 1280, 800)
    assert r.run["goal"] == "Subscribe jane.doe@example.com to the Acme Weekly newsletter."
    rows = [(s["action_type"], s["action_keys"], s["effect_high_risk"], s["action_effect_observed"]) for s in r.steps]
    assert rows == [
        ("CLICK", None, True, False),  # Subscribe, swallowed by the consent box (the first frame is input_image)
        ("CLICK", None, False, None),  # accept the box
        ("CLICK", None, False, None),
        ("KEY_PRESS", "ctrl+a", False, None),
        ("TYPE", None, False, None),
        ("KEY_PRESS", "Return", True, True),  # ENTER submits: the success message
        ("DONE", None, False, None),
    ]
    assert "Subscribe" in r.steps[0]["reasoning"]  # the reasoning summary before the call
    assert r.steps[1]["url_before"] == r.steps[1]["url_after"] == "http://sample.local/newsletter.html"
    assert r.steps[-1]["action_text"] == "Subscribed jane.doe@example.com; the page confirms it."
    assert r.run["claimed_success"] is True and r.run["claim_reason"] == "done"


@pytest.mark.slow
def test_other_containers_read_the_same(tmp_path):
    data = json.loads((FIX / "items.json").read_text())
    want = [s["action_type"] for s in _one(FIX).steps]
    shapes = {
        "list.json": json.dumps(data["items"]),
        "responses.json": json.dumps([{"input": data["items"][:1]}, {"output": data["items"][1:]}]),
        "items.jsonl": "".join(json.dumps(i) + "\n" for i in data["items"]),
        # cua's TrajectorySaverCallback: the run's items as `new_items`, the request's messages in `kwargs`
        "metadata.json": json.dumps({"status": "completed", "kwargs": {"messages": data["items"][:1]},
                                     "new_items": data["items"][1:]}),
    }
    for name, text in shapes.items():
        d = tmp_path / name.replace(".", "-")
        d.mkdir()
        (d / name).write_text(text)
        assert claims(d)
        assert [s["action_type"] for s in _one(d).steps] == want, name


def test_claims_only_cua_transcripts(tmp_path):
    assert claims(FIX)
    assert not claims(SAMPLES / "consent-overlay-on")
    assert not claims(ROOT / "tests" / "fixtures" / "anthropic" / "feedback-2x")


@pytest.mark.parametrize("action,kind,field,value", [
    ({"type": "click", "button": "right", "x": 1, "y": 2}, "RIGHT_CLICK", "x", 1.0),
    ({"type": "click", "button": "wheel", "x": 1, "y": 2}, "MIDDLE_CLICK", "y", 2.0),
    ({"type": "keypress", "keys": ["CTRL", "S"]}, "KEY_PRESS", "keys", "ctrl+s"),
    ({"type": "scroll", "x": 5, "y": 6, "scroll_x": 0, "scroll_y": 300}, "SCROLL", "x", 5.0),
    ({"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 9, "y": 8}]}, "DRAG", "y", 8.0),
    ({"type": "screenshot"}, "WAIT", "x", None),
])
def test_action_mapping(action, kind, field, value):
    a = map_action(action)
    assert a.type == kind and getattr(a, field) == value


def test_a_batch_of_actions_shares_one_screenshot_and_commentary_is_no_answer(tmp_path):
    data = json.loads((FIX / "items.json").read_text())
    items = data["items"]
    calls = [i for i, it in enumerate(items) if it.get("type") == "computer_call"]
    first, second = items[calls[3]], items[calls[4]]  # ctrl+a, then type: one batch of two actions
    first["actions"] = [first.pop("action"), second["action"]]
    # the second call and the first call's output go: the batch runs both, then one screenshot (the second's)
    items[:] = [it for i, it in enumerate(items) if i != calls[4] and not (
        it.get("type") == "computer_call_output" and it.get("call_id") == first["call_id"])]
    for it in items:
        if it.get("type") == "computer_call_output" and it.get("call_id") == second["call_id"]:
            it["call_id"] = first["call_id"]
    items[-1]["phase"] = "commentary"  # the last message narrates: it is no final answer
    d = tmp_path / "batch"
    d.mkdir()
    (d / "items.json").write_text(json.dumps(data))
    r = _one(d)
    rows = [(s["action_type"], s["shared_frames"]) for s in r.steps]
    assert rows[3:5] == [("KEY_PRESS", True), ("TYPE", False)]  # one screenshot after the batch: one owner
    assert len(r.steps) == 6 and r.steps[-1]["action_type"] != "DONE"  # commentary is not the final answer
    assert r.run["claim_reason"] == "no_done"


def test_an_unknown_action_type_is_an_unknown_step_with_a_warning(tmp_path):
    data = json.loads((FIX / "items.json").read_text())
    call = next(it for it in data["items"] if it.get("type") == "computer_call")
    call["action"] = {"type": "teleport", "x": 1, "y": 2}
    d = tmp_path / "unknown"
    d.mkdir()
    (d / "items.json").write_text(json.dumps(data))
    r = _one(d)
    assert r.steps[0]["action_type"] == "UNKNOWN"
    assert any("'teleport'" in w and w.endswith("[action_unparsed]") for w in r.run["warnings"])


@pytest.mark.slow
def test_a_large_transcript_is_read_one_item_at_a_time(monkeypatch, tmp_path):
    """Past STREAM_BYTES a transcript is streamed: the same steps as read whole, in each container shape."""
    from trajcheck.readers.adapters.openai import reader as openai_responses
    from trajcheck.readers.kit import stream

    want = _one(FIX)
    data = json.loads((FIX / "items.json").read_text())
    shapes = {"list": data["items"], "responses": [{"output": data["items"]}], "items": data}
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    streamed = []
    real = openai_responses.stream_items
    monkeypatch.setattr(openai_responses, "stream_items", lambda *a: streamed.append(a) or real(*a))
    keep = ("action_type", "action_x", "action_y", "frame_pre", "frame_post", "url_after", "action_effect_observed")
    for name, value in shapes.items():
        d = tmp_path / name
        d.mkdir()
        (d / "items.json").write_text(json.dumps(value))
        got = _one(d)
        assert [[s[k] for k in keep] for s in got.steps] == [[s[k] for k in keep] for s in want.steps], name
    assert _one(tmp_path / "items").run["screen_width"] == want.run["screen_width"] == 1280  # tools after the items
    assert len(streamed) >= 3  # each shape took the streamed path
    d = tmp_path / "cut"
    d.mkdir()
    text = json.dumps(data)
    (d / "items.json").write_text(text[: len(text) // 2])
    bad = _one(d)
    assert bad.run["status"] == "invalid" and "[json_invalid]" in bad.run["error"]


REAL = ROOT / "tests" / "fixtures" / "real" / "openai"


def test_output_the_ga_computer_tool_really_returned():
    """Real Responses API output (provenance in the fixture's README): a whole response with a batched
    `actions` list, and one computer_call item saved alone. No screenshots were captured: the run says so."""
    runs = {r.run["run_id"]: r for r in score_paths([REAL], jobs=1).results}
    resp, turn = runs["response-1"], runs["turn-1"]
    assert (resp.run["status"], resp.run["agent_model"]) == ("ok", "gpt-5.6-sol")
    assert [s["action_type"] for s in resp.steps] == ["WAIT"]  # the batch's one screenshot action
    assert [(s["action_type"], s["action_x"], s["action_y"]) for s in turn.steps] == [("MOUSE_MOVE", 426.0, 87.0)]
    assert json.loads(turn.steps[0]["action_extra"]).get("modifiers") is None  # keys: null holds no key
    assert any(w.endswith("[frames_not_found]") for w in turn.run["warnings"])
