"""Anthropic's computer-use actions: the ``computer`` tool's ``input.action`` (``computer_20241022``,
``computer_20250124``, ``computer_20251124``), the member tools of ``computer_toolset_20260801`` (each action a
tool of its own name, no ``action`` key), the browser toolset's members (``browser_toolset_20260801``: a
``target`` that is a coordinate or an element ``ref``), and the loop's other tools (bash, the text editor).
Sources: anthropics/claude-quickstarts ``computer-use-demo/computer_use_demo/tools/computer.py`` at 370e18d4a20f;
anthropics/anthropic-sdk-python ``computer-toolset.md`` and ``browser-toolset.md`` at f6346e63b750."""

from __future__ import annotations

from typing import Any

from ....base.problems import Slug
from ....schemas.records import Action

from ...kit.reading import Problems

CLICKS = {"left_click": "CLICK", "right_click": "RIGHT_CLICK", "middle_click": "MIDDLE_CLICK",
          "double_click": "DOUBLE_CLICK", "triple_click": "TRIPLE_CLICK"}
#: Tool actions that only look: no step of their own effect (a screenshot between two frames is idle).
LOOKS = {"screenshot": "WAIT", "cursor_position": "READ", "zoom": "READ"}
LOOKS_ACTIONS = frozenset(LOOKS)


#: The member tools of ``computer_toolset_20260801``: each action is a tool of its own name, with no ``action`` key.
MEMBERS = frozenset({"key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down", "left_mouse_up",
                     "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "triple_click",
                     "scroll", "wait", "screenshot", "zoom"})
#: Tools of a computer-use loop that act off screen: steps of type TOOL (never UNKNOWN, never high-risk).
OTHER_TOOLS = frozenset({"bash", "str_replace_editor", "str_replace_based_edit_tool", "text_editor", "web_search",
                         "web_fetch", "code_execution", "memory"})


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
    if name in CLICKS:
        if text:
            extra["modifiers"] = text  # keys held during the click (2025 versions)
        return Action(CLICKS[name], x=x, y=y, extra=extra)
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
    if name in LOOKS:
        return Action(LOOKS[name], x=x, y=y, extra=extra)
    return Action("UNKNOWN", x=x, y=y, extra={**extra, "raw": name})  # the caller warns, naming it


def tool_action(block: dict[str, Any], i: int, problems: Problems) -> Action:
    """A tool_use block as an action: the ``computer`` tool (``input.action``), a member of the computer toolset
    (the tool's name is the action), a member of the browser toolset, another tool of the loop (``TOOL``), or a
    tool trajcheck does not know (``UNKNOWN``, with a warning naming it)."""
    name = str(block.get("name", ""))
    inp: dict[str, Any] = given if isinstance(given := block.get("input"), dict) else {}
    toolset = block.get("toolset_name")
    if name == "computer" and "action" in inp:
        a = map_action(inp)
        if a.type == "UNKNOWN":
            problems.warn(Slug.ACTION_UNPARSED, f"computer action {inp.get('action')!r} is not one trajcheck knows",
                          field=f"messages[{i}]", hint="the step is scored as an UNKNOWN action")
        return a
    if toolset == "browser":
        return _browser_action(name, inp, i, problems)
    if name in MEMBERS and (toolset in (None, "computer")) and "action" not in inp:
        a = map_action({**inp, "action": name})
        return Action(a.type, a.x, a.y, a.keys, a.text, a.url, a.element, {**a.extra, "toolset": "computer"})
    if name in OTHER_TOOLS:
        return Action("TOOL", text=str(inp.get("command") or inp.get("query") or "")[:2000] or None,
                      extra={"tool": name, "input": inp})
    of = f" of toolset {toolset!r}" if toolset else ""
    problems.warn(Slug.ACTION_UNPARSED, f"tool_use {name!r}{of} is not a computer-use action trajcheck knows",
                  field=f"messages[{i}]", hint="the step is scored as an UNKNOWN action")
    return Action("UNKNOWN", extra={"tool": name, "input": inp, "raw": name})


#: Browser toolset members that only read the page or the browser: a look, like a screenshot.
_BROWSER_READS = frozenset({"read_page", "get_page_text", "find", "list_tabs", "read_console", "read_network",
                            "screenshot", "zoom"})


def _browser_action(name: str, inp: dict[str, Any], i: int, problems: Problems) -> Action:
    """A member of ``browser_toolset_20260801``: its ``target`` is a coordinate {x, y} or an element ``ref``."""
    target: dict[str, Any] = given if isinstance(given := inp.get("target"), dict) else {}
    extra: dict[str, Any] = {"tool_action": name, "input": inp, "toolset": "browser"}
    if name == "navigate":
        url = str(inp.get("url") or "")
        if url in ("back", "forward", "reload"):
            return Action("NAVIGATE", extra={**extra, "navigation": url})
        return Action("NAVIGATE", url=url or None, extra=extra)
    if name in _BROWSER_READS:
        return Action("WAIT" if name == "screenshot" else "READ", extra=extra)
    if name in MEMBERS:
        point = [target["x"], target["y"]] if target.get("type") == "coordinate" and "x" in target else None
        a = map_action({**inp, **({"coordinate": point} if point else {}), "action": name})
        element = str(target["ref"]) if target.get("type") == "ref" and target.get("ref") is not None else None
        return Action(a.type, a.x, a.y, a.keys, a.text, a.url, element, {**a.extra, **extra})
    if name in ("new_tab", "switch_tab", "close_tab"):
        return Action("NAVIGATE", extra={**extra, "navigation": name})
    if name in ("form_input", "file_upload"):
        return Action("TYPE", text=str(inp.get("value") or "") or None, element=str(inp.get("ref") or "") or None,
                      extra=extra)
    if name == "hover":
        a = _browser_action("mouse_move", inp, i, problems)
        return Action(a.type, a.x, a.y, a.keys, a.text, a.url, a.element, {**a.extra, "tool_action": "hover"})
    if name == "scroll_to":
        return Action("SCROLL", element=str(inp.get("ref") or "") or None, extra=extra)
    if name == "javascript_exec":
        return Action("TOOL", text=str(inp.get("code") or "")[:2000] or None, extra={**extra, "tool": name})
    problems.warn(Slug.ACTION_UNPARSED, f"browser tool {name!r} is not an action trajcheck knows",
                  field=f"messages[{i}]", hint="the step is scored as an UNKNOWN action")
    return Action("UNKNOWN", extra={**extra, "raw": name})
