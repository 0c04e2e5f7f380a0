"""UI-TARS style session logs: per-step screenshots, the model's raw reply, and a parsed action.

A run is a directory holding one JSON (or JSONL) session log: an object with a ``steps`` (or
``trajectory``) list, or a list of steps. Each step has the screenshot the model saw
(``screenshot`` / ``screenshot_path`` / ``image``: a path inside the run or base64), the raw reply
(``response`` / ``prediction`` / ``raw_response``: ``Thought: ... Action: click(start_box='(x,y)')``), and,
when the harness parsed it, the action (``parsed_action`` / ``action``: ``{action_type, action_inputs:
{start_box, end_box, content, key, direction}}``, the structure UI-TARS's own parser returns). The reply's
action grammar is parsed when no parsed action is recorded:

    click(start_box='(x,y)')  left_double(...)  right_single(...)  drag(start_box=..., end_box=...)
    hotkey(key='ctrl c')  type(content='...')  scroll(start_box=..., direction='down')  wait()
    finished(content='...')  call_user()

Boxes may carry the model's special tokens (``<|box_start|>(x,y)<|box_end|>``) or four numbers (a box:
its centre is the point). Coordinates are in the session's ``coordinate_space``: ``relative-1000``
(UI-TARS's published convention: 0-999 across the screen; the default) or ``pixels`` (of ``screen``
{width, height}, or of the screenshot). A step's screenshot is what the model saw before acting, so it is
that step's pre frame and the previous step's post frame.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem
from trajcheck.jsonio import iter_jsonl, parse_json_text
from trajcheck.schemas.records import Action, Run, Step

from .browser_use import MAX_HISTORY_BYTES
from .sparse import Frames, Sniffer
from .webvoyager import raise_errors, read_text_file

NAME = "ui-tars"
_MARKS = re.compile(rb"start_box|action_type|Action:\s*(?:click|type|hotkey|scroll|drag|finished|wait)\(")
_REPLY = re.compile(r"Action:\s*(?P<call>[a-z_]+\(.*\))\s*$", re.S | re.I)
_NUMS = re.compile(r"-?\d+(?:\.\d+)?")
_KINDS = {"click": "CLICK", "left_single": "CLICK", "left_double": "DOUBLE_CLICK", "right_single": "RIGHT_CLICK",
          "drag": "DRAG", "select": "DRAG", "hotkey": "KEY_PRESS", "press": "KEY_PRESS", "type": "TYPE",
          "scroll": "SCROLL", "wait": "WAIT", "finished": "DONE", "call_user": "CALL_USER"}


#: A UI-TARS mark, and none of the vendor transcripts' (those readers claim them).
SNIFF = Sniffer(lambda head: bool(_MARKS.search(head)) and b'"computer_call"' not in head and b'"tool_use"' not in head,
                "session.json")
claims = SNIFF.claims


def parse_call(text: str) -> tuple[str, dict[str, str]] | None:
    """``click(start_box='(10,20)')`` as ("click", {"start_box": "(10,20)"}), with ``ast`` (never run)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    args: dict[str, str] = {}
    for kw in node.keywords:
        if kw.arg and isinstance(kw.value, ast.Constant):
            args[kw.arg] = str(kw.value.value)
    return node.func.id, args


def parse_reply(reply: str) -> tuple[str | None, tuple[str, dict[str, str]] | None]:
    """The thought and the action call of a raw UI-TARS reply (``Thought: ...`` then ``Action: ...``)."""
    m = _REPLY.search(reply)
    cut = m.start() if m else (reply.find("Action:") if "Action:" in reply else len(reply))
    thought = reply[:cut]
    thought = re.sub(r"^\s*(?:Thought|Reflection|Action_Summary):\s*", "", thought.strip(), flags=re.I) or None
    return thought, parse_call(m.group("call")) if m else None


def _point(box: Any, scale: tuple[float, float]) -> tuple[float, float] | None:
    nums = [float(n) for n in _NUMS.findall(str(box))] if box is not None else []
    if len(nums) == 4:
        nums = [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2]
    if len(nums) != 2:
        return None
    return round(nums[0] * scale[0], 1), round(nums[1] * scale[1], 1)


def map_action(kind: str, inputs: dict[str, Any], scale: tuple[float, float]) -> Action:
    """A UI-TARS action (its name and inputs) as a trajcheck action; ``scale`` maps model coordinates to
    screen pixels."""
    t = _KINDS.get(kind, kind.upper() or "UNKNOWN")
    extra: dict[str, Any] = {"tool_action": kind, "input": inputs}
    pt = _point(inputs.get("start_box") or inputs.get("point"), scale)
    x, y = pt if pt else (None, None)
    if t == "DRAG":
        end = _point(inputs.get("end_box"), scale)
        extra["start"] = [x, y]
        x, y = end if end else (None, None)
    if t == "KEY_PRESS":
        keys = str(inputs.get("key") or inputs.get("hotkey") or "").strip()
        return Action(t, keys="+".join(keys.split()) or None, extra=extra)
    if t == "TYPE":
        text = str(inputs.get("content", ""))
        if text.endswith("\n"):
            extra["then_enter"] = True  # UI-TARS submits by typing a trailing newline
        return Action(t, text=text, extra=extra)
    if t == "SCROLL":
        extra["direction"] = inputs.get("direction")
    if t == "DONE":
        return Action(t, text=str(inputs["content"]) if inputs.get("content") else None, extra=extra)
    return Action(t, x=x, y=y, extra=extra)


def _steps_of(value: Any) -> tuple[list[Any], dict[str, Any]]:
    if isinstance(value, list):
        return value, {}
    if isinstance(value, dict):
        for k in ("steps", "trajectory", "history"):
            if isinstance(value.get(k), list):
                return value[k], value
    return [], {}


def read_ui_tars(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    rel = SNIFF.pick(run_dir, run_id, problems)
    text = read_text_file(run_dir / rel, run=run_id, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    raw: list[Any] = []
    meta: dict[str, Any] = {}
    if text is not None:
        if rel.endswith(".jsonl"):
            for _n, v, p in iter_jsonl(text, run=run_id, file=rel):
                if p:
                    problems.append(p)
                else:
                    raw.append(v)
        else:
            data, p = parse_json_text(text, run=run_id, file=rel)
            if p:
                problems.append(p)
            else:
                raw, meta = _steps_of(data)
    raise_errors(problems, run_id)
    screen = meta.get("screen") if isinstance(meta.get("screen"), dict) else {}
    w, h = screen.get("width"), screen.get("height")
    w, h = (w, h) if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else (None, None)
    space = str(meta.get("coordinate_space") or "relative-1000")
    if space == "relative-1000" and w is None:
        problems.append(Problem("screen_unknown", "coordinates are relative (0-999) but the session records no "
                                "screen {width, height}", run=run_id, file=rel, field="screen", severity="warning",
                                hint="add screen to the session log, or coordinate_space: pixels; points are "
                                "left out"))
    scale = (w / 1000, h / 1000) if space == "relative-1000" and w else (1.0, 1.0)
    frames = Frames(run_dir, run_id, rel, problems)
    shots: list[str | None] = []
    for i, s in enumerate(raw):
        shot = s.get("screenshot") or s.get("screenshot_path") or s.get("image") if isinstance(s, dict) else None
        name = None
        if isinstance(shot, str) and shot:
            field = f"steps[{i}].screenshot"
            looks_b64 = shot.startswith("data:") or (len(shot) > 200 and "/" not in shot[:64] and "." not in shot[-8:])
            name = frames.from_base64(shot, field) if looks_b64 else frames.from_path(shot, field)
        shots.append(name)
    steps: list[Step] = []
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            problems.append(Problem("schema", f"step is a {type(s).__name__}, not an object", run=run_id, file=rel,
                                    field=f"steps[{i}]", hint="each step is {screenshot, response, parsed_action}"))
            continue
        reply = next((s[k] for k in ("response", "prediction", "raw_response", "model_output")
                      if isinstance(s.get(k), str)), None)
        thought, call = parse_reply(reply) if reply else (None, None)
        parsed = s.get("parsed_action") or s.get("action")
        if isinstance(parsed, list) and parsed:
            parsed = parsed[0]
        if isinstance(parsed, dict) and parsed.get("action_type"):
            action = map_action(str(parsed["action_type"]), dict(parsed.get("action_inputs") or {}), scale)
        elif call is not None:
            action = map_action(call[0], call[1], scale)
        else:
            problems.append(Problem("action_unparsed", "no parsed action and no Action: call in the reply",
                                    run=run_id, file=rel, field=f"steps[{i}]", severity="warning",
                                    hint="the step is scored as an UNKNOWN action"))
            action = Action("UNKNOWN", extra={"raw": reply})
        if space == "relative-1000" and w is None and action.x is not None:
            action = Action(action.type, None, None, action.keys, action.text, action.url, action.element,
                            {**action.extra, "point_dropped": "relative coordinates without a screen size"})
        steps.append(Step(index=len(steps), action=action, reasoning=s.get("thought") or thought,
                          frame_pre=shots[i], frame_post=shots[i + 1] if i + 1 < len(shots) else None,
                          extra={"raw_reply": reply[:4000]} if reply else {}, source=rel))
    if not steps:
        problems.append(Problem("steps_empty", "the session log has no steps", run=run_id, file=rel,
                                hint="a run needs at least one step"))
    raise_errors(problems, run_id)
    done = steps[-1].action.type == "DONE"
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps),
              goal=meta.get("instruction") or meta.get("task") if isinstance(meta.get("instruction") or meta.get("task"),
                                                                             str) else None,
              agent_name="ui-tars", agent_model=meta.get("model") if isinstance(meta.get("model"), str) else None,
              screen_width=w if space == "pixels" or w else None, screen_height=h if space == "pixels" or h else None,
              outcome_status="done" if done else None, inline_frames=frames.inline)
    return run, [p for p in problems if p.severity != "error"]


READER = Reader(
    name=NAME,
    claims=claims,
    read=read_ui_tars,
    summary="UI-TARS style session log: per-step screenshots, the raw reply (Thought/Action grammar) and a "
            "parsed action; coordinates relative (0-999, the default) or in pixels",
    mapping=(
        ("directory name", "run_id"),
        ("instruction / task, model, screen {width, height}", "goal, agent.model, screen"),
        ("coordinate_space: relative-1000 (default) | pixels", "points scaled to the screen (relative needs screen)"),
        ("steps[i].screenshot / screenshot_path / image (path or base64)", "frames.pre of step i, frames.post of "
                                                                             "step i-1"),
        ("steps[i].response (Thought: ... Action: ...)", "reasoning (the thought), and the action when no parsed one"),
        ("parsed_action {action_type, action_inputs}", "the action"),
        ("click / left_single (start_box)", "CLICK at the box (a 4-number box: its centre)"),
        ("left_double, right_single", "DOUBLE_CLICK, RIGHT_CLICK"),
        ("drag / select (start_box, end_box)", "DRAG to end_box; extra.start"),
        ("hotkey (key='ctrl c')", "KEY_PRESS ctrl+c"),
        ("type (content; a trailing newline submits)", "TYPE, text; extra.then_enter"),
        ("scroll (start_box, direction)", "SCROLL; extra.direction"),
        ("wait, finished (content), call_user", "WAIT, DONE (text), CALL_USER"),
    ),
)
