"""Large logs read an item or a line at a time (issue 27's leftover): JSONL transcripts (Anthropic, OpenAI) a line
at a time, browser-use histories an item at a time (ijson over `history.item`). The threshold (STREAM_BYTES) is
lowered here so that the fixtures stream; each is read both ways and must give the same run: steps, frames and
inline images, outcome and request fields. benchmarks/bench_transcript.py measures the memory and the rate."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest
from PIL import Image

from trajcheck.readers.adapters.anthropic import logs as anthropic_logs, reader as anthropic_messages
from trajcheck.readers.adapters.browser_use import reader as browser_use, history as browser_use_read
from trajcheck.readers.adapters.openai import reader as openai_responses
from trajcheck.readers.kit import stream
from trajcheck.base.errors import Problem, RunFormatError
from trajcheck.schemas.records import Run, Usage

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
    assert (a.usage, a.wall_seconds) == (b.usage, b.wall_seconds)  # the steps' are in the steps compared above


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


def test_an_anthropic_jsonl_of_saved_messages_gives_their_usage_streamed(monkeypatch, tmp_path):
    """Assistant turns saved as the API's whole Message (usage, model): the usage of each, the cached input added,
    on the step of its call, read a line at a time as read whole; the responses' model is the run's."""
    src = json.loads((FIX / "anthropic" / "feedback-2x" / "messages.json").read_text())["messages"]
    usages = iter([(100, 5, 40), (200, 7, 150), (300, 9, 250)])
    msgs = []
    for m in src:
        if m["role"] == "assistant":
            inp, out, read = next(usages)
            m = {**m, "model": "claude-sonnet-4-5", "usage": {"input_tokens": inp, "output_tokens": out,
                                                             "cache_read_input_tokens": read}}
        msgs.append(m)
    d = tmp_path / "saved"
    _lines(d / "messages.jsonl", msgs)
    whole, streamed = _both(monkeypatch, anthropic_messages.read_anthropic_messages, d, anthropic_logs,
                            "stream_lines")
    _same(whole, streamed)
    assert [s.usage for s in streamed.steps] == [Usage(140, 5, 40, None, None, "claude-sonnet-4-5"),
                                                 Usage(350, 7, 150, None, None, "claude-sonnet-4-5"),
                                                 Usage(550, 9, 250, None, None, "claude-sonnet-4-5")]
    assert streamed.agent_model == "claude-sonnet-4-5"


def _responses() -> list[dict[str, Any]]:
    """Three Responses of a computer-use loop: two clicks, then a final answer, each with its usage and times."""
    acts = [{"type": "computer_call", "call_id": f"c{i}", "action": {"type": "click", "x": 10, "y": 10}}
            for i in range(2)]
    outs = [{"type": "computer_call_output", "call_id": f"c{i}", "output": {"type": "computer_screenshot"}}
            for i in range(2)]
    return [
        {"model": "gpt-x", "created_at": 100, "usage": {"input_tokens": 10, "output_tokens": 2}, "output": [acts[0]]},
        {"created_at": 104.5, "input": [outs[0]], "usage": {"input_tokens": 20, "output_tokens": 3,
                                                            "input_tokens_details": {"cached_tokens": 8}},
         "output": [acts[1]]},
        {"created_at": 110, "completed_at": 111.25, "input": [outs[1]],
         "usage": {"input_tokens": 30, "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 1}},
         "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]},
    ]


@pytest.mark.parametrize("name,watched", [("responses.jsonl", "stream_lines"), ("responses.json", "stream_items")])
def test_openai_responses_give_their_usage_and_seconds_streamed(monkeypatch, tmp_path, name, watched):
    """A transcript of Responses, a line (JSONL) or an item (a JSON list) at a time: each response's usage on its
    step, and its seconds from its created_at to the next one's (the last, to its completed_at), as read whole."""
    d = tmp_path / "cua"
    if name.endswith(".jsonl"):
        _lines(d / name, _responses())
    else:
        d.mkdir()
        (d / name).write_text(json.dumps(_responses()))
    whole, streamed = _both(monkeypatch, openai_responses.read_openai_responses, d, openai_responses, watched)
    _same(whole, streamed)
    assert [(s.action.type, s.usage, s.wall_seconds) for s in streamed.steps] == [
        ("CLICK", Usage(10, 2, None, None, None, "gpt-x"), 4.5), ("CLICK", Usage(20, 3, 8, None, None, None), 5.5),
        ("DONE", Usage(30, 4, None, 1, None, None), 1.25)]
    assert streamed.agent_model == "gpt-x"


# --- browser-use histories ----------------------------------------------------------------------------------

def _b64png(color: tuple[int, int, int]) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _history(d: Path, items: list[Any], **top: Any) -> Path:
    d.mkdir(parents=True)
    (d / "AgentHistoryList.json").write_text(json.dumps({"usage": {"tokens": 7}, **top, "history": items},
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


def test_a_streamed_history_gives_the_items_seconds_and_the_runs_usage(monkeypatch, tmp_path):
    """Read an item at a time (one item of look-ahead): an item's metadata step_start_time/step_end_time are the
    seconds of its last action, and the history's usage summary (read after the items) is the run's, as read
    whole. A cost of 0 beside tokens is browser-use's "not computed"."""
    items = [_item({"click": {"index": i}}, {"is_done": False}, "https://a.example/", _b64png((i * 60, 0, 0)))
             for i in range(3)]
    items[0]["model_output"]["action"].append({"click": {"index": 9}})  # two actions: the seconds on the last
    items[0]["result"].append({"is_done": False})
    for i, (start, end) in enumerate([(1000.0, 1002.5), (1003.0, 1003.75), (1004.0, None)]):
        items[i]["metadata"] = {"step_start_time": start, "step_end_time": end, "step_number": i + 1}
    usage = {"total_prompt_tokens": 900, "total_prompt_cached_tokens": 300, "total_completion_tokens": 60,
             "total_cost": 0, "by_model": {"gpt-4.1": {}}}
    d = _history(tmp_path / "timed", items, usage=usage)
    whole, streamed = _both(monkeypatch, browser_use.read_browser_use, d, browser_use_read, "stream_items")
    _same(whole, streamed)
    assert [s.wall_seconds for s in streamed.steps] == [None, 2.5, 0.75, None]
    assert streamed.usage == Usage(900, 60, 300, None, None, "gpt-4.1")


@pytest.mark.realruns
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


def test_a_streamed_file_nested_too_deep_stops_at_the_depth_limit(tmp_path: Path) -> None:
    """ijson builds each event's dotted prefix, as long as the nesting is deep: a streamed transcript nested
    30,000 deep stops at the depth limit (the caller then reads it whole, where the JSON reader names the depth),
    in a process held to 4 GB of address space, with a peak of a few hundred MB."""
    path = tmp_path / "messages.json"
    path.write_text('{"messages": [{"role": "user", "content": ' + "[" * 30000 + "]" * 30000 + "}]}")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
            # the process's own high-water mark (VmHWM): rusage's ru_maxrss carries the parent's over exec
            "def _hwm_mb():\n"
            "    line = next(x for x in open('/proc/self/status') if x.startswith('VmHWM:'))\n"
            "    return int(line.split()[1]) // 1024\n"
            "from pathlib import Path\n"
            "from trajcheck.readers.kit import stream\n"
            "try:\n"
            "    list(stream.stream_items(Path(sys.argv[1]), 'messages', {}))\n"
            "    print('read')\n"
            "except stream.StreamError as e:\n"
            "    print('stopped:', e)\n"
            "print(_hwm_mb())\n")
    res = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    said, peak = res.stdout.splitlines()
    assert said == f"stopped: nested deeper than {stream.MAX_DEPTH} levels"
    assert int(peak) < 400, f"peak {peak} MB"
