"""The shapes Claude computer-use harnesses save a run in, read as the Messages transcript they stand for: the
request's ``messages`` (JSON, a list, or JSONL of messages or of whole requests), an event log (``events``:
``user_input``, ``api_response``, ``tool_result`` with ``output`` / ``error`` / ``image_path``, as the
CS715 macOS demo's ``json_logger.py`` writes it), and one JSON per step (``step_01.json``: ``{response,
tool_output}``, with ``step_01.png`` beside it and the task in ``task_*.txt``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ....base.errors import Problem
from ....base.problems import Slug
from ....schemas.records import Usage
from ....base.inputs import exists_not_dir, open_regular
from ....base.jsonio import parse_json_text

from ...kit.reading import (MAX_HISTORY_BYTES, MAX_STEP_FILES, SNIFF_BYTES, Problems, jsonl_values, load_json,
                            looks_like_base64, natural, read_text_file)
from ...kit.stream import any_line, stream_items, stream_lines, streams
from ...kit.shape import walk
from ...kit.usage import anthropic_usage, elapsed, seconds_of

#: Keys of an assistant message made from an event log: the usage its ``token_usage`` events record (a Usage),
#: and the seconds its turn took. Not the API's: a transcript's own messages never hold them.
USAGE = "trajcheck:usage"
SECONDS = "trajcheck:wall_seconds"


def messages_of(text: str, rel: str, run: str, problems: list[Problem]) -> tuple[list[Any], dict[str, Any]]:
    """The messages and the request around them (tools, model...) of a transcript file."""
    if rel.endswith(".jsonl"):
        msgs: list[Any] = []
        request: dict[str, Any] | None = None
        for value in jsonl_values(text, run=run, rel=rel, problems=problems):
            if isinstance(value, dict) and isinstance(value.get("messages"), list):
                request = value  # one request per line: the last one holds the whole run
            else:
                msgs.append(value)
        return (request["messages"], request) if request is not None else (msgs, {})
    data, p = parse_json_text(text, run=run, file=rel)
    if p:
        problems.append(p)
        return [], {}
    if isinstance(data, list):
        return data, {}
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        reply = data.get("response")  # a request saved with the response it got (one file per step)
        if isinstance(reply, dict) and isinstance(reply.get("content"), list):
            return [*data["messages"], {"role": "assistant", "content": reply["content"]}], data
        return data["messages"], data
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        return events_to_messages(data["events"])
    problems.append(Problem(Slug.SCHEMA, "expected a messages list (or an object with one)", run=run, file=rel, line=1,
                            field="messages", hint="save the conversation's messages as the API takes them"))
    return [], {}


def _is_request(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def stream_messages(path: Path, rel: str, problems: list[Problem], run: str,
                    req: dict[str, Any]) -> Iterator[Any]:
    """A large JSONL transcript's messages as :func:`messages_of` reads them, a line at a time: when a line holds
    a whole request (found by a scan that parses only the lines naming ``"messages"``), the last request's
    messages (``req`` gets its fields; one line is held at a time while the file is read), else every line's
    message as it is read."""
    if any_line(path, b'"messages"', _is_request):
        last: dict[str, Any] | None = None
        for value in stream_lines(path, run=run, rel=rel, problems=problems):
            if _is_request(value):
                last = value  # one request per line: the last one holds the whole run
        if last is not None:
            req.update(last)
            yield from last["messages"]
        return
    yield from stream_lines(path, run=run, rel=rel, problems=problems)


def head(path: Path) -> bytes:
    """A file's first SNIFF_BYTES (never a FIFO's; b"" when it cannot be read): enough to tell its shape."""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            return f.read(SNIFF_BYTES)
    except OSError:
        return b""


def transcript(run_dir: Path, rel: str, problems: Problems) -> tuple[Iterable[Any], dict[str, Any]]:
    """The messages of the transcript ``rel`` and the request around them (whole once the messages are read):
    a large transcript streamed, a JSON ``messages`` one a message at a time and a JSONL one a line at a time
    (other shapes are read whole at any size); raises on an unreadable file."""
    path = run_dir / rel
    start = head(path)
    meta: dict[str, Any] = {}
    if streams(run_dir, rel, MAX_HISTORY_BYTES) and b'"messages"' in start and not is_cumulative(start) \
            and b'"events"' not in start:
        return stream_items(path, "messages", meta), meta
    if streams(run_dir, rel, MAX_HISTORY_BYTES, (".jsonl",)):
        return stream_messages(path, rel, problems, problems.run, meta), meta
    text = read_text_file(path, run=problems.run, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    messages, req = messages_of(text, rel, problems.run, problems) if text is not None else ([], {})
    problems.raise_errors()
    return messages, req


def events_to_messages(events: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """A harness's event log (``events``: ``user_input`` {instruction}, ``model_selection`` {model},
    ``token_usage`` {input_tokens, output_tokens, cost_usd, model}, ``api_response`` {content: the response's
    blocks}, ``tool_result`` {tool_use_id, output | error | image_path}) as the messages it stands for.

    Each assistant message carries, under :data:`USAGE`, the ``token_usage`` events logged since the previous
    response (the call that produced it), and under :data:`SECONDS` the seconds its turn took by the events'
    ``timestamp``: from the end of the previous turn (its last event; for the first, the user's instruction) to
    the end of this one (its last tool result, else the response): the model's call and the actions it
    issued."""
    msgs: list[Any] = []
    req: dict[str, Any] = {}
    usage: Usage | None = None  # the token_usage events since the last response
    start: float | None = None  # when the first turn's time starts: the instruction
    turns: list[tuple[dict[str, Any], float | None]] = []  # each response's message and its turn's last time
    for e in events:
        data: dict[str, Any] = given if isinstance(e, dict) and isinstance(given := e.get("data"), dict) else {}
        kind = e.get("type") if isinstance(e, dict) else None
        at = seconds_of(e.get("timestamp")) if isinstance(e, dict) else None
        if kind == "user_input" and isinstance(data.get("instruction"), str):
            msgs.append({"role": "user", "content": data["instruction"]})
            start = at if start is None else start
        elif kind == "model_selection" and isinstance(data.get("model"), str):
            req["model"] = data["model"]
        elif kind == "token_usage":
            got = anthropic_usage(data)
            usage = got if usage is None else usage + got if got is not None else usage
        elif kind == "api_response":
            own = anthropic_usage(data.get("usage"), data.get("model"))  # the response's own usage, when kept
            msg: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
            msg[USAGE] = own if usage is None else usage + own if own is not None else usage
            usage = None
            turns.append((msg, at))
            msgs.append(msg)
        elif kind == "tool_result":
            content: list[dict[str, Any]] = []
            text = data.get("error") or data.get("output")
            if isinstance(text, str) and text:
                content.append({"type": "text", "text": text})
            if isinstance(data.get("image_path"), str):
                content.append({"type": "image", "path": data["image_path"]})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": data.get("tool_use_id"),
                                                      "is_error": bool(data.get("error")), "content": content}]})
            if turns and at is not None:
                turns[-1] = (turns[-1][0], at)
    for msg, end in turns:
        msg[SECONDS] = elapsed(start, end)
        start = end
    return msgs, req


#: One JSON per step: ``step_01.json``, ``step-2.json``, ``step3.json``.
STEP_FILE = re.compile(r"^step[_-]?(\d+)\.json$", re.I)
def is_step_log(head: bytes) -> bool:
    """A per-step file of a Claude harness: the model's ``response`` blocks and the ``tool_output``."""
    return b'"tool_output"' in head and b'"response"' in head


def step_files(run_dir: Path) -> list[str]:
    """The run's step files in step order (by their number, not by name: step_10 after step_9)."""
    try:
        names = [p.name for p in run_dir.iterdir() if STEP_FILE.match(p.name) and exists_not_dir(p)]
    except OSError:
        return []
    return sorted(names, key=natural)[:MAX_STEP_FILES]


def _task(run_dir: Path, run: str, problems: list[Problem]) -> str | None:
    """The instruction a per-step harness keeps beside the steps (``task_001.txt``, ``task.txt``)."""
    try:
        names = sorted(p.name for p in run_dir.iterdir() if p.name.lower().startswith(("task", "instruction"))
                       and p.suffix.lower() == ".txt" and exists_not_dir(p))
    except OSError:
        return None
    if not names:
        return None
    text = read_text_file(run_dir / names[0], run=run, rel=names[0], problems=problems, limit=1024 * 1024)
    return text.strip() or None if text is not None else None


def steps_to_messages(run_dir: Path, names: list[str], run: str,
                      problems: list[Problem]) -> tuple[list[Any], dict[str, Any]]:
    """One JSON per step (``{response: [blocks], tool_output: {status, error, screenshot}}``, the step's
    screenshot, taken after it, in ``tool_output.screenshot`` or beside it as ``step_NN.png``) as messages: the
    task, then each step's assistant turn and the results of its tool calls."""
    msgs: list[Any] = []
    task = _task(run_dir, run, problems)
    if task:
        msgs.append({"role": "user", "content": task})
    for name in names:
        got = load_json(run_dir / name, run=run, rel=name, problems=problems)
        d = got[0] if got is not None and isinstance(got[0], dict) else None
        if d is None:
            continue
        resp = d.get("response")
        blocks = resp.get("content") if isinstance(resp, dict) else resp
        blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        reply: dict[str, Any] = {"role": "assistant", "content": blocks}
        if isinstance(resp, dict):  # the API's whole Message: its usage and model too
            reply.update({k: resp[k] for k in ("usage", "model") if k in resp})
        msgs.append(reply)
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        if not uses:
            continue
        out: dict[str, Any] = given if isinstance(given := d.get("tool_output"), dict) else {}
        err = out.get("error")
        failed = bool(err) or str(out.get("status", "")).lower() in ("error", "failed", "failure")
        text = str(err or out.get("status") or "") or None
        shot = out.get("screenshot")
        if not isinstance(shot, str) or not shot:
            stem = name.rsplit(".", 1)[0]
            shot = next((f"{stem}{ext}" for ext in (".png", ".jpg", ".jpeg", ".webp")
                         if exists_not_dir(run_dir / f"{stem}{ext}")), None)
        results = []
        for k, b in enumerate(uses):
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            if k == len(uses) - 1 and shot:  # one screenshot after the step: after its last call
                content.append({"type": "image", **({"source": {"type": "base64", "data": shot}}
                                                    if looks_like_base64(shot) else {"path": shot})})
            results.append({"type": "tool_result", "tool_use_id": b.get("id"), "is_error": failed, "content": content})
        msgs.append({"role": "user", "content": results})
    return msgs, {}


def cumulative(value: Any) -> bool:
    """:func:`is_cumulative` on a file's parsed data (:mod:`trajcheck.readers.kit.shape`)."""
    return isinstance(value, dict) and all(k in value for k in ("messages", "response", "step"))


def is_cumulative(head: bytes) -> bool:
    """A file a harness writes at every step holding the whole request so far and its response
    (``{step, messages, response}``): the folder's last such file holds the whole run."""
    return b'"messages"' in head and b'"response"' in head and b'"step"' in head


#: The computer tool, and the members of the toolset that name its actions (a transcript of the toolset has no
#: block named ``computer``).
_COMPUTER = frozenset({"computer", "left_click", "type", "key", "screenshot", "scroll", "double_click", "mouse_move"})


def shape(value: Any) -> str | None:
    """A transcript (messages with a role), an event log (``events``, whose api_response events hold the
    response's blocks) or a per-step log (``response`` and ``tool_output``), holding a ``tool_use`` block of the
    computer tool or of a member of the computer toolset."""
    uses = roles = False
    for node in walk(value):
        if isinstance(node, dict):
            uses = uses or (node.get("type") == "tool_use" and node.get("name") in _COMPUTER)
            roles = roles or (node.get("role") in ("user", "assistant") and "content" in node)
        if uses and roles:
            break
    if not uses:
        return None
    if isinstance(value, dict) and "response" in value and "tool_output" in value:
        return "a Claude harness's step log (response blocks with a computer tool_use, tool_output)"
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        return "an event log whose responses hold a computer tool_use"
    if roles:
        return "a Claude transcript (messages whose content holds a computer tool_use)"
    return None
