"""UI-TARS's action grammar: the model's reply, UI-TARS's own parsed structure, and harnesses' flat actions.

Every published form is read (bytedance/UI-TARS ``codes/ui_tars/action_parser.py`` and ``prompt.py``,
UI-TARS-desktop ``packages/ui-tars/action-parser/src/actionParser.ts``; docs/formats.md cites the
commits):

* the reply: ``Thought: ...`` (or ``Reflection: ...`` then ``Action_Summary: ...``), then ``Action: ...``
  (or the full-width ``Action：``), holding one call or several separated by blank lines;
* a call's point: ``start_box='<|box_start|>(x,y)<|box_end|>'``, ``'(x,y)'``, a box ``'[x1,y1,x2,y2]'``
  (its centre), ``'<point>x y</point>'``, ``'<bbox>x1 y1 x2 y2</bbox>'``, under ``start_box``, ``point``,
  ``start_point`` (and ``end_box`` / ``end_point`` for a drag's end);
* UI-TARS's parsed structure ``{action_type, action_inputs}``, whose boxes are fractions of the screen
  (``"[0.5, 0.5, 0.5, 0.5]"``);
* the flat shape harnesses log after executing the action: ``{type: click, x, y}``, ``{type: drag, x1, y1,
  x2, y2}``, ``{type: hotkey, keys}``, ``{type: type, text}``, ``{type: scroll, x, y, direction}``,
  ``{type: finished, content}``.

Calls are parsed with ``ast``, never run. Points stay in the log's own space here: the reader decides
that space for the whole run (:mod:`trajcheck.readers.kit.coords`) and converts them.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ....schemas.records import Action

#: The action part's marker, as UI-TARS's parsers find it: case-sensitive, the last one in the reply (bounded
#: classes only: every pattern here runs in linear time on any reply).
_ACTION = re.compile(r"\bAction[ \t]*[:：][ \t]*")
_HEADS = re.compile(r"^[ \t]*(?:Thought|Reflection|Action_Summary)[ \t]*[:：][ \t]*", re.M)
_NUMS = re.compile(r"-?\d+(?:\.\d+)?")
_CALL_START = re.compile(r"^\s*[A-Za-z_]\w*\s*\(")
#: A section heading on its own line after the action part (AppAgent's ``Summary:``), and a bare action name.
_NEXT_HEAD = re.compile(r"\n[ \t]*[A-Z][A-Za-z_]{1,30}[ \t]*[:：]")
_WORD = re.compile(r"[A-Za-z_]\w{0,40}")

#: UI-TARS action names (desktop, browser and mobile prompts, and the names executors accept) -> types.
KINDS = {"click": "CLICK", "left_click": "CLICK", "left_single": "CLICK", "left_double": "DOUBLE_CLICK",
         "double_click": "DOUBLE_CLICK", "right_single": "RIGHT_CLICK", "right_click": "RIGHT_CLICK",
         "middle_click": "MIDDLE_CLICK", "long_press": "LONG_PRESS", "hover": "MOUSE_MOVE", "move_to": "MOUSE_MOVE",
         "mouse_move": "MOUSE_MOVE", "mouse_down": "MOUSE_DOWN", "mouse_up": "MOUSE_UP", "drag": "DRAG",
         "select": "DRAG", "left_click_drag": "DRAG", "swipe": "DRAG", "hotkey": "KEY_PRESS", "press": "KEY_PRESS",
         "keydown": "KEY_PRESS", "release": "KEY_UP", "keyup": "KEY_UP", "type": "TYPE", "scroll": "SCROLL",
         "wait": "WAIT", "finished": "DONE", "call_user": "CALL_USER", "user_stop": "DONE", "error_env": "DONE",
         "navigate": "NAVIGATE", "navigate_back": "NAVIGATE", "press_back": "NAVIGATE", "back": "NAVIGATE",
         "press_home": "KEY_PRESS", "home": "KEY_PRESS", "open_app": "NAVIGATE", "open": "NAVIGATE"}
#: Input names of a point, and of a drag's end.
POINT_KEYS = ("start_box", "point", "start_point", "start_coords", "coordinate")
END_KEYS = ("end_box", "end_point", "end_coords")


def parse_call(text: str) -> tuple[str, dict[str, str]] | None:
    """``click(start_box='(10,20)')`` as ("click", {"start_box": "(10,20)"}), with ``ast`` (never run). A value
    that is not a string (``start_box=(10,20)``) is kept as its source text."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    args: dict[str, str] = {}
    for kw in node.keywords:
        if kw.arg is None:
            continue
        if isinstance(kw.value, ast.Constant):
            args[kw.arg] = str(kw.value.value)
        else:
            args[kw.arg] = ast.get_source_segment(text.strip(), kw.value) or ""
    for i, a in enumerate(node.args):  # a positional point or text: click('(1,2)'), type('hi')
        if isinstance(a, ast.Constant):
            args.setdefault("start_box" if i == 0 and _NUMS.search(str(a.value)) else "content", str(a.value))
    return node.func.id, args


def split_calls(text: str) -> list[str]:
    """The calls of an action part: each line that starts a call, with the lines up to the next one (a typed
    text may hold newlines)."""
    calls: list[list[str]] = []
    for line in text.splitlines():
        if _CALL_START.match(line) or not calls:
            calls.append([line])
        else:
            calls[-1].append(line)
    return [c for c in ("\n".join(lines).strip() for lines in calls) if c]


def parse_reply(reply: str) -> tuple[str | None, list[tuple[str, dict[str, str]]], list[str]]:
    """The thought of a raw UI-TARS reply, its action calls, and the call texts that do not parse."""
    marks = list(_ACTION.finditer(reply))
    head = reply[:marks[-1].start()] if marks else reply
    thought = _HEADS.sub("", head).strip() or None
    if not marks:
        return thought, [], []
    part = reply[marks[-1].end():]
    # one call, whatever newlines its text holds (a typed text with raw newlines, as some harnesses log it)
    whole = parse_call(part) or (parse_call(part.replace("\n", "\\n")) if "\n" in part.strip() else None)
    if whole is None and (m := _NEXT_HEAD.search(part)):  # a section after the action (``Summary: ...``)
        part = part[:m.start()]
        whole = parse_call(part) or (parse_call(part.replace("\n", "\\n")) if "\n" in part.strip() else None)
    if whole is None and _WORD.fullmatch(part.strip()):  # a bare name: ``FINISH``
        whole = (part.strip(), {})
    if whole is not None:
        return thought, [whole], []
    calls, bad = [], []
    for text in split_calls(part):
        got = parse_call(text)
        if got is None:
            bad.append(text)
        else:
            calls.append(got)
    return thought, calls, bad


def point_of(value: Any) -> tuple[float, float] | None:
    """A point from any of UI-TARS's forms: two numbers, or four (a box: its centre)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        nums = [float(v) for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
    else:
        nums = [float(n) for n in _NUMS.findall(str(value))]
    if len(nums) == 4:
        nums = [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2]
    return (nums[0], nums[1]) if len(nums) == 2 else None


def map_action(kind: str, inputs: dict[str, Any], fractions: bool = False) -> Action:
    """A UI-TARS action (its name and inputs) as a trajcheck action, its points in the log's own space
    (``fractions``: UI-TARS's parsed structure, 0-1 of the screen, read as the 0-1000 grid). A name trajcheck
    does not know is UNKNOWN, with the name in ``extra.tool_action``."""
    t = KINDS.get(kind, "UNKNOWN")
    extra: dict[str, Any] = {"tool_action": kind, "input": inputs}
    k = 1000.0 if fractions else 1.0
    pt = next((p for key in POINT_KEYS if (p := point_of(inputs.get(key))) is not None), None)
    x, y = (pt[0] * k, pt[1] * k) if pt else (None, None)
    if t == "DRAG":
        end = next((p for key in END_KEYS if (p := point_of(inputs.get(key))) is not None), None)
        extra["start"] = [x, y]
        x, y = (end[0] * k, end[1] * k) if end else (None, None)
    if t in ("KEY_PRESS", "KEY_UP"):
        keys = inputs.get("key") or inputs.get("hotkey") or inputs.get("keys") or ""
        keys = " ".join(str(v) for v in keys) if isinstance(keys, list) else str(keys)
        keys = {"press_home": "home", "home": "home"}.get(kind, keys)
        return Action(t, keys="+".join(keys.split()) or None, extra=extra)
    if t == "TYPE":
        text = str(inputs.get("content", inputs.get("text", "")))
        if text.endswith("\n") or text.endswith("\\n"):
            extra["then_enter"] = True  # UI-TARS submits by typing a trailing newline
        return Action(t, text=text, extra=extra)
    if t == "SCROLL":
        extra["direction"] = inputs.get("direction")
    if t == "NAVIGATE":
        extra["navigation"] = "back" if "back" in kind else kind
        url = inputs.get("content") or inputs.get("url")
        return Action(t, url=str(url) if url and kind == "navigate" else None,
                      text=str(inputs["app_name"]) if inputs.get("app_name") else None, extra=extra)
    if t == "DONE":
        if kind != "finished":
            extra["infeasible"] = True  # error_env, user_stop: the run stopped without finishing (no claim)
        content = inputs.get("content")
        return Action(t, text=str(content) if content else None, extra=extra)
    return Action(t, x=x, y=y, extra=extra)


#: The flat shape's own type names -> UI-TARS action names.
_FLAT = {"click": "click", "left_click": "click", "double_click": "left_double", "right_click": "right_single",
         "left_double": "left_double", "right_single": "right_single", "left_single": "click",
         "drag": "drag", "hotkey": "hotkey", "key": "hotkey", "type": "type", "scroll": "scroll", "wait": "wait",
         "finished": "finished", "done": "finished", "call_user": "call_user", "move": "hover", "press": "press"}


def map_flat(d: dict[str, Any]) -> Action | None:
    """A harness's flat action (``{type: click, x, y}``; see the module docstring) in screen pixels, as it was
    executed; None for ``{type: raw}`` / ``{type: none}`` and unknown types (the caller warns)."""
    kind = _FLAT.get(str(d.get("type", "")).lower())
    if kind is None:
        return None
    inputs: dict[str, Any] = {k: v for k, v in d.items() if k != "type"}
    if "x" in d and "y" in d:
        inputs["start_coords"] = [_number(d["x"]), _number(d["y"])]
    if "x1" in d and "y1" in d:
        inputs["start_coords"] = [_number(d["x1"]), _number(d["y1"])]
        inputs["end_coords"] = [_number(d.get("x2")), _number(d.get("y2"))]
    a = map_action(kind, inputs)
    return Action(a.type, a.x, a.y, a.keys, a.text, a.url, a.element, {**a.extra, "flat": True})


def _number(v: Any) -> float | None:
    """A coordinate as a number: a JSON number, or a string that holds one (``"124"``); None otherwise."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None
