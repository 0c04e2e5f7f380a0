"""Anthropic Messages transcripts of a computer-use loop (the ``computer`` tool, 2024 and 2025 versions).

A run is a directory holding one transcript: a JSON file with a ``messages`` list (and, as the API
request has them, the ``tools`` and the ``model``), a JSON list of messages, or JSONL with one message
per line. Shapes as Anthropic documents them and as the reference loop writes them
(anthropic-quickstarts, computer-use-demo/computer_use_demo/loop.py, ``_make_api_tool_result``):

* assistant messages: ``text`` blocks (the reasoning) and ``tool_use`` blocks named ``computer`` with an
  ``input`` {action, coordinate [x, y], start_coordinate, text, scroll_direction, scroll_amount,
  duration}; actions of ``computer_20241022`` (key, type, mouse_move, left_click, left_click_drag,
  right_click, middle_click, double_click, screenshot, cursor_position) and of ``computer_20250124``
  and later (left_mouse_down/up, hold_key, scroll, wait, triple_click, zoom);
* user messages: ``tool_result`` blocks {tool_use_id, is_error, content: text and ``image`` blocks
  whose source is base64 (or, in harnesses that save screenshots, a file path)}.

Screenshots arrive only in tool results, so several actions can fall between two frames. Each action
is a step whose frames are the nearest screenshots before and after it; when a group of actions shares
one frame pair, the pair goes to the group's last high-risk action (else its last action) and the
others are marked ``shared_frames``: their perceptual verdict is null, never a no-effect of their own.
A ``mouse_move`` followed by a ``left_click`` without a coordinate is one click at the moved-to point.
Coordinates are in the display size the tool was declared with (``display_width_px`` /
``display_height_px``), which becomes the run's ``screen``: a screenshot saved at another scale (a 2x
capture) is scaled to it. The final assistant message without a tool call is the DONE step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajcheck.discovery import FormatDoc, Reader, Table
from trajcheck.errors import Problem
from trajcheck.jsonio import parse_json_text
from trajcheck.schemas.records import Action, Run, Step

from .kit import MAX_HISTORY_BYTES, Frames, Problems, Sniffer, jsonl_values, read_text_file, run_id_of
from .sparse import Results, Timeline, last_frame, steps_of

NAME = "anthropic-messages"

_CLICKS = {"left_click": "CLICK", "right_click": "RIGHT_CLICK", "middle_click": "MIDDLE_CLICK",
           "double_click": "DOUBLE_CLICK", "triple_click": "TRIPLE_CLICK"}
#: Tool actions that only look: no step of their own effect (a screenshot between two frames is idle).
_LOOKS = {"screenshot": "WAIT", "cursor_position": "READ", "zoom": "READ"}
_LOOKS_ACTIONS = frozenset(_LOOKS)


#: A transcript holds a tool_use of the computer tool.
SNIFF = Sniffer(lambda head: b'"tool_use"' in head and b'"computer"' in head and b'"role"' in head, "messages.json")
claims = SNIFF.claims


def _messages_of(text: str, rel: str, run: str, problems: list[Problem]) -> tuple[list[Any], dict[str, Any]]:
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
        return data["messages"], data
    problems.append(Problem("schema", "expected a messages list (or an object with one)", run=run, file=rel, line=1,
                            field="messages", hint="save the conversation's messages as the API takes them"))
    return [], {}


def _blocks(msg: Any) -> list[dict[str, Any]]:
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(blocks: list[dict[str, Any]]) -> str | None:
    parts = [b["text"].strip() for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(p for p in parts if p) or None


def _screen(req: dict[str, Any]) -> tuple[int | None, int | None]:
    for tool in req.get("tools") or []:
        if isinstance(tool, dict) and (str(tool.get("type", "")).startswith("computer_")
                                       or tool.get("name") == "computer"):
            w, h = tool.get("display_width_px"), tool.get("display_height_px")
            if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0:
                return w, h
    w, h = req.get("display_width_px"), req.get("display_height_px")
    return (w, h) if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else (None, None)


def _point(v: Any) -> tuple[float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) for c in v):
        return float(v[0]), float(v[1])
    return None


def map_action(inp: dict[str, Any]) -> Action:
    """One ``computer`` tool input as a trajcheck action."""
    name = str(inp.get("action", ""))
    extra: dict[str, Any] = {"tool_action": name, "input": inp}
    pt = _point(inp.get("coordinate"))
    x, y = pt if pt else (None, None)
    text = inp.get("text") if isinstance(inp.get("text"), str) else None
    if name in _CLICKS:
        if text:
            extra["modifiers"] = text  # keys held during the click (2025 versions)
        return Action(_CLICKS[name], x=x, y=y, extra=extra)
    if name == "type":
        return Action("TYPE", text=text, extra=extra)
    if name in ("key", "hold_key"):
        if name == "hold_key":
            extra["duration"] = inp.get("duration")
        return Action("KEY_PRESS", keys=text, extra=extra)
    if name == "scroll":
        extra.update(direction=inp.get("scroll_direction"), amount=inp.get("scroll_amount"))
        return Action("SCROLL", x=x, y=y, extra=extra)
    if name == "left_click_drag":
        start = _point(inp.get("start_coordinate"))
        if start:
            extra["start"] = list(start)
        return Action("DRAG", x=x, y=y, extra=extra)
    if name == "mouse_move":
        return Action("MOUSE_MOVE", x=x, y=y, extra=extra)
    if name in ("left_mouse_down", "left_mouse_up"):
        return Action("MOUSE_DOWN" if name.endswith("down") else "MOUSE_UP", x=x, y=y, extra=extra)
    if name == "wait":
        extra["duration"] = inp.get("duration")
        return Action("WAIT", extra=extra)
    if name in _LOOKS:
        return Action(_LOOKS[name], x=x, y=y, extra=extra)
    return Action(name.upper() or "UNKNOWN", x=x, y=y, extra=extra)


def _frame_of(frames: Frames, block: dict[str, Any], field: str) -> str | None:
    """An ``image`` block's frame: ``source`` {type: base64, data}, or a file path (``source.path``,
    ``source.file``, ``path``) inside the run directory."""
    src = given if isinstance(given := block.get("source"), dict) else {}
    if src.get("type") == "base64" and isinstance(src.get("data"), str):
        return frames.from_base64(src["data"], field)
    path = src.get("path") or src.get("file") or block.get("path")
    return frames.from_path(path, field) if isinstance(path, str) and path else None


def _parse(run_dir: Path, problems: Problems) -> tuple[str, list[Any], dict[str, Any]]:
    """The transcript's file, its messages and the request around them; raises on an unreadable file."""
    rel = SNIFF.pick(run_dir, problems.run, problems)
    problems.file = rel
    text = read_text_file(run_dir / rel, run=problems.run, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    messages, req = _messages_of(text, rel, problems.run, problems) if text is not None else ([], {})
    problems.raise_errors()
    return rel, messages, req


def _timeline(messages: list[Any], frames: Frames) -> tuple[Timeline, Results, str | None, str | None]:
    """The actions and screenshots in transcript order, each call's result, the goal, and the text of a final
    assistant message that calls no tool (None when the transcript ends otherwise)."""
    goal = None
    timeline: Timeline = []
    results: Results = {}
    final_text = None
    for i, msg in enumerate(messages):
        blocks = _blocks(msg)
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "assistant":
            reasoning = _text(blocks)
            uses = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == "computer"
                    and isinstance(b.get("input"), dict)]
            for b in uses:
                timeline.append(("act", map_action(b["input"]), reasoning, b.get("id"), i))
            final_text = None if uses or any(b.get("type") == "tool_use" for b in blocks) else reasoning
        elif role == "user":
            if goal is None and _text(blocks) and not any(b.get("type") == "tool_result" for b in blocks):
                goal = _text(blocks)
            _user_turn(blocks, i, frames, timeline, results)
    return timeline, results, goal, final_text


def _user_turn(blocks: list[dict[str, Any]], i: int, frames: Frames, timeline: Timeline,
               results: Results) -> None:
    """A user message's screenshots (its own image blocks and those of its tool results) and results."""
    for j, b in enumerate(blocks):
        if b.get("type") == "image":  # a screenshot the harness sent in a user turn
            name = _frame_of(frames, b, f"messages[{i}].content[{j}]")
            if name:
                timeline.append(("frame", name))
        if b.get("type") != "tool_result":
            continue
        inner = b.get("content")
        inner = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner
        inner = [c for c in inner if isinstance(c, dict)] if isinstance(inner, list) else []
        results[str(b.get("tool_use_id"))] = (bool(b.get("is_error")), _text(inner))
        for k, c in enumerate(inner):
            if c.get("type") == "image":
                name = _frame_of(frames, c, f"messages[{i}].content[{j}].content[{k}]")
                if name:
                    timeline.append(("frame", name))


def read_anthropic_messages(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one Anthropic computer-use transcript (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    problems = Problems(run_id)
    rel, messages, req = _parse(run_dir, problems)
    frames = Frames(run_dir, run_id, rel, problems)
    timeline, results, goal, final_text = _timeline(messages, frames)
    steps = steps_of(timeline, results, rel, _LOOKS_ACTIONS)
    if final_text is not None:  # the outcome: a last answer without a tool call is the DONE
        last = last_frame(timeline)
        steps.append(Step(index=len(steps), action=Action("DONE", text=final_text), reasoning=final_text,
                          source=rel, frame_pre=last, frame_post=last))
    if not steps:
        problems.error("steps_empty", "the transcript has no computer tool call", field="messages",
                       hint="a run needs at least one action of the computer tool")
    problems.raise_errors()
    w, h = _screen(req)
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), goal=goal,
              agent_name="anthropic computer use", agent_model=req.get("model") if isinstance(req.get("model"), str)
              else None, screen_width=w, screen_height=h, outcome_status="done" if final_text is not None else None,
              extra={k: req[k] for k in ("task_id", "metadata") if k in req}, inline_frames=frames.inline)
    return run, problems.warnings()


DOC = FormatDoc(
    title="Anthropic computer-use transcripts",
    claims=("A run is a directory holding one transcript of a loop driving Anthropic's `computer` tool: a "
            "JSON object with the request's `messages` (and, as the API takes them, `tools` and `model`), a "
            "JSON list of messages, or JSONL with one message per line (or one whole request per line: the "
            "last is read). The reader claims a directory by content: one of its first 8 `.json`/`.jsonl` "
            "files has, in its first 256 KiB, a `tool_use` block of the `computer` tool. Two transcripts in "
            "one directory: the first by name is read, with a `history_ambiguous` warning."),
    example=("trajcheck score transcripts/ --out LEDGER          # one folder per transcript\n"
             "trajcheck formats anthropic-messages"),
    about=(
        ("The shapes are Anthropic's documented ones and the reference loop's (anthropic-quickstarts, "
         "`computer-use-demo/computer_use_demo/loop.py`, `_make_api_tool_result`; `tools/computer.py` for "
         "the actions and the coordinate scaling)."),
    ),
    tables=(
        Table(head=("transcript", "trajcheck"), rows=(
            ("`tools[type=computer_*]` `display_width_px`, `display_height_px`",
             ("`screen`: the model's coordinates are in this size; a screenshot saved at another scale (2x) "
              "is scaled to it")),
            ("first user message's text", "`goal`"),
            ("assistant `text` blocks", "`reasoning` of the actions of that turn"),
            ("`tool_use` `computer` `{action, coordinate, text, ...}`", "one step per action (table below)"),
            (("`tool_result` `image` blocks (`source.type = base64`, or `source.path` / `path` inside the "
              "run)"),
             ("frames, in order: an action's pre frame is the last screenshot before it, its post frame the "
              "first one after it")),
            ("`tool_result` `is_error: true` and its text", "`executor.ok = false`, `executor.error`"),
            ("the last assistant message, when it calls no tool",
             "a `DONE` step with its text (`outcome.status = done`); `claimed_success` reads what it says"),
        )),
        Table(head=("action", "step"), rows=(
            (("`left_click`, `right_click`, `middle_click`, `double_click`, `triple_click` (`coordinate`, "
              "`text` = modifiers)"),
             "`CLICK`, `RIGHT_CLICK`, `MIDDLE_CLICK`, `DOUBLE_CLICK`, `TRIPLE_CLICK` at x, y (`extra.modifiers`)"),
            ("`mouse_move` then a click without `coordinate` (2024 tool)",
             "one click at the moved-to point (`extra.point_from = mouse_move`)"),
            ("`type`", "`TYPE`, text"),
            ("`key`, `hold_key` (xdotool names: `Return`, `ctrl+s`)",
             "`KEY_PRESS`, keys (`Return` submits: high-risk)"),
            ("`scroll` (`scroll_direction`, `scroll_amount`)", "`SCROLL` at x, y; `extra.direction`, `extra.amount`"),
            ("`left_click_drag` (`start_coordinate`), `left_mouse_down`/`up`, `mouse_move`",
             "`DRAG` (`extra.start`), `MOUSE_DOWN`/`MOUSE_UP`, `MOUSE_MOVE`"),
            ("`wait`, `screenshot`", "`WAIT` (a look: an idle frame pair teaches ambient change)"),
            ("`cursor_position`, `zoom`", "`READ`"),
            ("every action", "`extra.tool_action`, `extra.input`; the call's id in `extra.tool_use_id`"),
        )),
    ),
    notes=(
        ("**Sparse screenshots.** Loops that screenshot only when the model asks put several actions "
         "between two frames. They all get those two frames as pre and post, but only one is checked: the "
         "group's last high-risk action (else its last acting step); the others are marked `shared_frames` "
         "(a `steps` column) and their perceptual verdict is null, never a no-effect of their own."),
    ),
    lost=(
        "No URLs, titles or DOM: the observation check has frames only.",
        ("Screenshots the loop dropped from the transcript (the reference loop keeps only the most recent "
         "images when asked) leave their steps without frames (`frames_missing`)."),
        "Tool calls of other tools (bash, the text editor) are not steps.",
    ),
    bad_input=("a transcript that is not JSON (or a JSONL line that is not) makes the run invalid with its "
               "file and line (`json_invalid`); a transcript without a computer tool call, `steps_empty`; an "
               "inline screenshot that is not base64 or not an image, `frame_unreadable` (a warning), and a "
               "screenshot path that leaves the run directory, `path_escapes_run` (a warning)."),
    fixtures=("`tests/fixtures/anthropic/make_fixtures.py` records the fixtures in Chromium in these shapes "
              "(the screenshots are real; nothing is copied from anyone's logs)."),
    brief=("a folder holding one transcript of a computer-use loop (JSON `{messages, tools, model}`, a JSON list "
           "of messages, or JSONL), claimed by its content: `tool_use` blocks of the `computer` tool",
           "`computer_20241022` and `computer_20250124`+ actions (left/right/middle/double/triple click, "
           "mouse_move, drag, mouse down/up, type, key, hold_key, scroll, wait, screenshot, cursor_position, "
           "zoom) with `coordinate` in the declared `display_width_px`/`display_height_px` (the run's `screen`: "
           "a 2x capture is scaled); frames are the `tool_result` images (base64, or `source.path`); a "
           "`mouse_move` then a `left_click` without a coordinate is one click; actions that share a frame pair "
           "are `shared_frames`, and the pair goes to the last high-risk one",
           "no URLs or DOM; frames only where the loop screenshotted; `is_error` results are executor errors; "
           "the final message without a tool call is the DONE, read for what it claims"),
)


READER = Reader(
    name=NAME,
    claims=claims,
    read=read_anthropic_messages,
    summary="Anthropic Messages transcript of a computer-use loop (computer_20241022 / computer_20250124 and "
            "later): a JSON or JSONL file whose messages hold tool_use blocks of the computer tool",
    doc=DOC,
)
