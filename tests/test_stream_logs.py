"""Large logs read an item or a line at a time (issue 27's leftover): JSONL transcripts (Anthropic, OpenAI) a line
at a time, browser-use histories an item at a time (ijson over `history.item`). The threshold (STREAM_BYTES) is
lowered here so that the fixtures stream; each is read both ways and must give the same run: steps, frames and
inline images, outcome and request fields. benchmarks/bench_transcript.py measures the memory and the rate."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest
from PIL import Image

from trajcheck.adapters import (anthropic_logs, anthropic_messages, browser_use, browser_use_read, openai_responses,
                                stream)
from trajcheck.errors import Problem, RunFormatError
from trajcheck.schemas.records import Run

from conftest import ROOT

FIX = ROOT / "tests" / "fixtures"
BU_REAL = ROOT.parent / "shared" / "realruns" / "browser-use" / "AgentHistoryList_elon_musk"


def _both(monkeypatch: pytest.MonkeyPatch, read: Callable[[Path, str], tuple[Run, list[Any]]], path: Path,
          module: Any, name: str) -> tuple[Run, Run]:
    """The run read whole, then streamed (STREAM_BYTES 0), checking that the streamed read took the stream:
    ``module.name`` (the stream function the reader calls) is watched."""
    whole, _ = read(path, path.name)
    limit, real = stream.STREAM_BYTES, getattr(module, name)
    calls: list[Any] = []
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    streamed, _ = read(path, path.name)
    assert calls, f"{name} was not called: the log was read whole"
    monkeypatch.setattr(stream, "STREAM_BYTES", limit)
    monkeypatch.setattr(module, name, real)
    return whole, streamed


def _errors(monkeypatch: pytest.MonkeyPatch, read: Callable[[Path, str], tuple[Run, list[Any]]],
            path: Path) -> tuple[list[Problem], list[Problem]]:
    """The problems that make the run at ``path`` invalid, read whole and streamed (STREAM_BYTES 0)."""
    got = []
    for limit in (stream.STREAM_BYTES, 0):
        monkeypatch.setattr(stream, "STREAM_BYTES", limit)
        with pytest.raises(RunFormatError) as exc:
            read(path, path.name)
        got.append(exc.value.problems)
    return got[0], got[1]


def _same(a: Run, b: Run) -> None:
    """The same run, but for the line each step starts on (a stream does not count lines)."""
    assert [replace(s, line=None) for s in a.steps] == [replace(s, line=None) for s in b.steps]
    assert dict(a.inline_frames) == dict(b.inline_frames)
    assert (a.goal, a.agent_model, a.screen_width, a.screen_height, a.outcome_status, a.task_id, a.extra) == (
        b.goal, b.agent_model, b.screen_width, b.screen_height, b.outcome_status, b.task_id, b.extra)


def _lines(path: Path, values: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


# --- JSONL transcripts --------------------------------------------------------------------------------------

def test_an_anthropic_jsonl_of_messages_is_read_a_line_at_a_time(monkeypatch, tmp_path):
    src = json.loads((FIX / "anthropic" / "feedback-2x" / "messages.json").read_text())
    d = tmp_path / "msgs"
    _lines(d / "messages.jsonl", src["messages"])
    whole, streamed = _both(monkeypatch, anthropic_messages.read_anthropic_messages, d, anthropic_logs,
                            "stream_lines")
    _same(whole, streamed)
    assert len(streamed.inline_frames) == 2 and [s.action.type for s in streamed.steps] == ["WAIT", "CLICK", "DONE"]


def test_an_anthropic_jsonl_of_requests_reads_the_last(monkeypatch, tmp_path):
    """One whole request a line (the harness saved the request before each model call): the last line holds the
    run, and its fields (the tools' display, the model) are the run's."""
    src = json.loads((FIX / "anthropic" / "feedback-2x" / "messages.json").read_text())
    msgs = src["messages"]
    d = tmp_path / "reqs"
    _lines(d / "requests.jsonl", [{"model": src["model"], "tools": src["tools"], "messages": msgs[:k]}
                                  for k in (1, 3, len(msgs))])
    whole, streamed = _both(monkeypatch, anthropic_messages.read_anthropic_messages, d, anthropic_logs,
                            "stream_lines")
    _same(whole, streamed)
    assert (streamed.screen_width, streamed.agent_model) == (1280, src["model"]) and len(streamed.steps) == 3


def test_a_broken_line_of_a_streamed_jsonl_is_located_as_the_whole_read_locates_it(monkeypatch, tmp_path):
    src = json.loads((FIX / "anthropic" / "feedback-2x" / "messages.json").read_text())["messages"]
    d = tmp_path / "broken"
    path = _lines(d / "messages.jsonl", src)
    text = path.read_text().splitlines()
    text[2] = text[2][:40]
    path.write_text("\n".join(text) + "\n")
    whole, streamed = _errors(monkeypatch, anthropic_messages.read_anthropic_messages, d)
    assert [(p.slug, p.file, p.line) for p in whole] == [(p.slug, p.file, p.line) for p in streamed] == [
        ("json_invalid", "messages.jsonl", 3)]


def test_bytes_that_are_not_utf8_are_named_as_the_whole_read_names_them(monkeypatch, tmp_path):
    src = json.loads((FIX / "anthropic" / "feedback-2x" / "messages.json").read_text())["messages"]
    d = tmp_path / "latin"
    path = _lines(d / "messages.jsonl", src)
    data = path.read_bytes()
    cut = data.index(b"\n", data.index(b"\n") + 1) + 5  # on line 3
    path.write_bytes(b"\xef\xbb\xbf" + data[:cut] + b"\xff" + data[cut:])
    whole, streamed = _errors(monkeypatch, anthropic_messages.read_anthropic_messages, d)
    assert [(p.slug, p.line, p.message) for p in whole] == [(p.slug, p.line, p.message) for p in streamed] == [
        ("not_utf8", 3, f"not UTF-8 text (byte 0xff at offset {cut + 3})")]


def test_an_openai_jsonl_transcript_is_read_a_line_at_a_time(monkeypatch, tmp_path):
    src = json.loads((FIX / "openai" / "cua-newsletter" / "items.json").read_text())
    d = tmp_path / "items"
    _lines(d / "items.jsonl", [{"model": src["model"], "tools": src["tools"], "input": []}, *src["items"]])
    whole, streamed = _both(monkeypatch, openai_responses.read_openai_responses, d, openai_responses, "stream_lines")
    _same(whole, streamed)
    assert streamed.screen_width and streamed.inline_frames and streamed.steps[-1].action.type == "DONE"


# --- browser-use histories ----------------------------------------------------------------------------------

def _b64png(color: tuple[int, int, int]) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _history(d: Path, items: list[Any], **top: Any) -> Path:
    d.mkdir(parents=True)
    (d / "AgentHistoryList.json").write_text(json.dumps({**top, "history": items, "usage": {"tokens": 7}},
                                                        indent=2))
    return d


def _item(action: dict[str, Any], result: dict[str, Any], url: str, shot: str | None) -> dict[str, Any]:
    return {"model_output": {"thinking": "t", "next_goal": "n", "action": [action]}, "result": [result],
            "state": {"url": url, "title": url, "screenshot": shot,
                      "interacted_element": [{"bounds": {"x": 10, "y": 10, "width": 4, "height": 4}}]}}


def test_a_browser_use_history_is_read_an_item_at_a_time(monkeypatch, tmp_path):
    d = _history(tmp_path / "bu", [
        _item({"navigate": {"url": "https://a.example/"}}, {"is_done": False}, "about:blank", _b64png((200, 0, 0))),
        _item({"click": {"index": 3}}, {"is_done": False, "error": "gone"}, "https://a.example/", None),
        _item({"click": {"index": 4}}, {"is_done": False}, "https://a.example/", _b64png((0, 200, 0))),
        _item({"done": {"text": "ok", "success": True}}, {"is_done": True, "success": True,
                                                          "judgement": {"verdict": True, "reasoning": "fine"}},
              "https://a.example/b", _b64png((0, 0, 200)))], task="find a", task_id=12)
    whole, streamed = _both(monkeypatch, browser_use.read_browser_use, d, browser_use_read, "stream_items")
    _same(whole, streamed)
    assert [s.action.type for s in streamed.steps] == ["NAVIGATE", "CLICK", "CLICK", "DONE"]
    assert len(streamed.inline_frames) == 3 and streamed.judge == whole.judge and streamed.judge is not None
    assert (streamed.goal, streamed.task_id, streamed.extra["usage"]) == ("find a", "12", {"tokens": 7})


def test_the_real_browser_use_history_streams_to_the_same_run(monkeypatch):
    if not BU_REAL.is_dir():
        pytest.skip(f"{BU_REAL} is not present")
    whole, streamed = _both(monkeypatch, browser_use.read_browser_use, BU_REAL, browser_use_read,
                            "stream_items")
    _same(whole, streamed)
    assert len(streamed.steps) == 4 and len(streamed.inline_frames) == 4


@pytest.mark.parametrize("text,slug", [
    ('[{"model_output": null}]', "schema"),  # no history object
    ('{"history": {"a": 1}}', "schema"),
    ('{"history": []}', "steps_empty"),
    ('{"history": [1, {"model_output": null, "result": [], "state": {}}]}', "schema"),
])
def test_a_streamed_history_that_is_no_history_is_named_as_the_whole_read_names_it(monkeypatch, tmp_path, text, slug):
    d = tmp_path / "h"
    d.mkdir()
    (d / "AgentHistoryList.json").write_text(text)
    whole, streamed = _errors(monkeypatch, browser_use.read_browser_use, d)
    assert [p.slug for p in whole] == [p.slug for p in streamed] and whole[0].slug == slug


def test_a_truncated_streamed_history_is_invalid_with_its_line(monkeypatch, tmp_path):
    d = _history(tmp_path / "cut", [_item({"click": {"index": 1}}, {}, "https://a.example/", _b64png((9, 9, 9)))
                                    for _ in range(3)])
    path = d / "AgentHistoryList.json"
    text = path.read_text()
    path.write_text(text[: len(text) * 2 // 3])
    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    with pytest.raises(RunFormatError) as exc:
        browser_use.read_browser_use(d, "cut")
    bad = [p for p in exc.value.problems if p.slug == "json_invalid"]
    assert bad and bad[0].line is not None and bad[0].file == "AgentHistoryList.json"
