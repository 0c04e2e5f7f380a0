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

from trajcheck.discovery import FormatDoc, Reader, Table
from trajcheck.errors import Problem
from trajcheck.schemas.records import Action, Run, Step

from .kit import MAX_HISTORY_BYTES, Frames, Problems, Sniffer, load_json_or_jsonl, read_text_file, run_id_of

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
    head = reply[:cut]
    thought = re.sub(r"^\s*(?:Thought|Reflection|Action_Summary):\s*", "", head.strip(), flags=re.I) or None
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


def _parse(run_dir: Path, problems: Problems) -> tuple[str, list[Any], dict[str, Any]]:
    """The session log's file, its steps and the session's fields; raises on an unreadable log."""
    rel = problems.file = SNIFF.pick(run_dir, problems.run, problems)
    text = read_text_file(run_dir / rel, run=problems.run, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    raw: list[Any] = []
    meta: dict[str, Any] = {}
    if text is not None:
        value = load_json_or_jsonl(text, run=problems.run, rel=rel, problems=problems)
        raw, meta = (value, {}) if rel.endswith(".jsonl") else _steps_of(value)
    problems.raise_errors()
    return rel, raw, meta


def _screen(meta: dict[str, Any], problems: Problems) -> tuple[int | None, int | None, str, tuple[float, float]]:
    """The session's screen size, its coordinate space, and the scale from model coordinates to pixels."""
    screen = given if isinstance(given := meta.get("screen"), dict) else {}
    w, h = screen.get("width"), screen.get("height")
    w, h = (w, h) if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else (None, None)
    space = str(meta.get("coordinate_space") or "relative-1000")
    if space == "relative-1000" and w is None:
        problems.warn("screen_unknown", "coordinates are relative (0-999) but the session records no screen "
                      "{width, height}", field="screen", hint="add screen to the session log, or coordinate_space: "
                      "pixels; points are left out")
    scale = (w / 1000, h / 1000) if space == "relative-1000" and w and h else (1.0, 1.0)  # both set or neither
    return w, h, space, scale


def _shots(raw: list[Any], frames: Frames) -> list[str | None]:
    """Each step's screenshot as a frame name (None when it has none or it cannot be read)."""
    shots: list[str | None] = []
    for i, s in enumerate(raw):
        shot = s.get("screenshot") or s.get("screenshot_path") or s.get("image") if isinstance(s, dict) else None
        shots.append(frames.from_any(shot, f"steps[{i}].screenshot") if isinstance(shot, str) and shot else None)
    return shots


def _action(i: int, s: dict[str, Any], scale: tuple[float, float], drop_points: bool,
            problems: Problems) -> tuple[Action, str | None, str | None]:
    """A step's action (the parsed one, else the reply's), the thought, and the raw reply."""
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
        problems.warn("action_unparsed", "no parsed action and no Action: call in the reply", field=f"steps[{i}]",
                      hint="the step is scored as an UNKNOWN action")
        action = Action("UNKNOWN", extra={"raw": reply})
    if drop_points and action.x is not None:
        action = Action(action.type, None, None, action.keys, action.text, action.url, action.element,
                        {**action.extra, "point_dropped": "relative coordinates without a screen size"})
    return action, thought, reply


def _align(raw: list[Any], shots: list[str | None], scale: tuple[float, float], drop_points: bool, rel: str,
           problems: Problems) -> list[Step]:
    """One step per log entry: its screenshot is its pre frame and the previous step's post frame."""
    steps: list[Step] = []
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            problems.error("schema", f"step is a {type(s).__name__}, not an object", field=f"steps[{i}]",
                           hint="each step is {screenshot, response, parsed_action}")
            continue
        action, thought, reply = _action(i, s, scale, drop_points, problems)
        steps.append(Step(index=len(steps), action=action, reasoning=s.get("thought") or thought,
                          frame_pre=shots[i], frame_post=shots[i + 1] if i + 1 < len(shots) else None,
                          extra={"raw_reply": reply[:4000]} if reply else {}, source=rel))
    return steps


def read_ui_tars(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one UI-TARS session log (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    problems = Problems(run_id)
    rel, raw, meta = _parse(run_dir, problems)
    w, h, space, scale = _screen(meta, problems)
    frames = Frames(run_dir, run_id, rel, problems)
    steps = _align(raw, _shots(raw, frames), scale, space == "relative-1000" and w is None, rel, problems)
    if not steps:
        problems.error("steps_empty", "the session log has no steps", hint="a run needs at least one step")
    problems.raise_errors()
    done = steps[-1].action.type == "DONE"  # the outcome: the session ended on finished()
    goal = meta.get("instruction") or meta.get("task")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps),
              goal=goal if isinstance(goal, str) else None,
              agent_name="ui-tars", agent_model=meta.get("model") if isinstance(meta.get("model"), str) else None,
              screen_width=w if space == "pixels" or w else None, screen_height=h if space == "pixels" or h else None,
              outcome_status="done" if done else None, inline_frames=frames.inline)
    return run, problems.warnings()


DOC = FormatDoc(
    title="UI-TARS session logs",
    claims=("A run is a directory holding one session log, JSON (an object with `steps`, or `trajectory`, "
            "and the session's `instruction`, `model`, `screen` {width, height} and `coordinate_space`) or "
            "JSONL (one step per line). Claimed by content: one of its first 8 JSON files holds `start_box`, "
            "`action_type` or an `Action: click(`-style call in its first 256 KiB (and is no Anthropic or "
            "OpenAI transcript)."),
    example=("trajcheck score sessions/ --out LEDGER          # one folder per session log\n"
             "trajcheck formats ui-tars"),
    tables=(
        Table(head=("session log", "trajcheck"), rows=(
            ("`instruction` (or `task`), `model`, `screen` {width, height}", "`goal`, `agent.model`, `screen`"),
            ("`screenshot` / `screenshot_path` / `image` (a path in the run, or base64)",
             "the step's pre frame and the previous step's post frame (the model saw it before acting)"),
            ("`response` / `prediction` / `raw_response` (`Thought: ...` then `Action: ...`)",
             "`reasoning` (the thought); the action when none is parsed; `extra.raw_reply`"),
            ("`parsed_action` / `action` {action_type, action_inputs} (UI-TARS's own parser output)", "the action"),
            ("`click` / `left_single` (start_box), `left_double`, `right_single`",
             ("`CLICK`, `DOUBLE_CLICK`, `RIGHT_CLICK` at the box (special tokens allowed; a 4-number box: "
              "its centre)")),
            ("`drag` / `select` (start_box, end_box), `scroll` (direction)",
             "`DRAG` to end_box (`extra.start`), `SCROLL` (`extra.direction`)"),
            ("`hotkey(key='ctrl c')`, `type(content=...)`",
             "`KEY_PRESS ctrl+c`; `TYPE` (a trailing newline: `extra.then_enter`, a submit)"),
            ("`wait()`, `finished(content=...)`, `call_user()`", "`WAIT`, `DONE` with its text, `CALL_USER`"),
            ("the last step is `finished`", "`outcome.status = done`"),
        )),
    ),
    notes=(
        ("Coordinates: `coordinate_space: relative-1000` (the default, UI-TARS's published convention: 0-999 "
         "across the screen, scaled to `screen`) or `pixels`. Relative points without a `screen` are left out "
         "with a `screen_unknown` warning (only the global hash then decides). The reply is parsed with "
         "Python's `ast`, never run."),
    ),
    lost=(
        "No URLs, titles or DOM: the observation check has frames only.",
        ("A relative point without a screen size is left out (`screen_unknown`, `extra.point_dropped`): only "
         "the global frame hash compares that step's frames."),
        "Only the first of several parsed actions of one step is read.",
    ),
    bad_input=("a session log that is not JSON (or a JSONL line that is not) makes the run invalid with its "
               "file and line (`json_invalid`); a step that is not an object is a `schema` error; a step with "
               "neither a parsed action nor an `Action:` call is `UNKNOWN` (warning `action_unparsed`)."),
    fixtures=("The fixture `tests/fixtures/ui_tars/workspace` is recorded in Chromium by "
              "`tests/fixtures/anthropic/make_fixtures.py`."),
    brief=("a folder holding a UI-TARS style session log (JSON or JSONL; `steps` with `screenshot`, the raw "
           "`response` and an optional `parsed_action`), claimed by content",
           "UI-TARS's grammar (`click(start_box='(x,y)')`, `left_double`, `right_single`, `drag`, "
           "`hotkey(key='ctrl c')`, `type(content=...)` (a trailing newline submits), `scroll`, `wait`, "
           "`finished`), parsed with `ast`, never run; coordinates relative 0-999 (the default, scaled to the "
           "session's `screen`) or `coordinate_space: pixels`",
           "no URLs or DOM; a relative point without a screen size is left out (`screen_unknown`)"),
)


READER = Reader(
    name=NAME,
    claims=claims,
    read=read_ui_tars,
    summary="UI-TARS style session log: per-step screenshots, the raw reply (Thought/Action grammar) and a "
            "parsed action; coordinates relative (0-999, the default) or in pixels",
    doc=DOC,
)
