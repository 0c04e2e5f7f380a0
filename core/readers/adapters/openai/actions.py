"""The actions of OpenAI's computer-use tool (a ``computer_call``'s ``action``, or each of its batched
``actions``) as trajcheck actions: openai/openai-python ``types/responses/response_computer_tool_call.py``."""

from __future__ import annotations

from typing import Any

from ....schemas.records import Action

from ...kit.reading import num

__all__ = ["map_action"]

_BUTTONS = {"left": "CLICK", "right": "RIGHT_CLICK", "wheel": "MIDDLE_CLICK", "middle": "MIDDLE_CLICK",
            "back": "BACK_CLICK", "forward": "FORWARD_CLICK"}
#: keypress key names as the model writes them, in trajcheck's (xdotool-like) spelling.
_KEY_NAMES = {"CTRL": "ctrl", "CONTROL": "ctrl", "CMD": "cmd", "META": "cmd", "SUPER": "cmd", "ALT": "alt",
              "OPTION": "alt", "SHIFT": "shift", "ENTER": "Return", "RETURN": "Return", "ESC": "Escape",
              "ESCAPE": "Escape", "TAB": "Tab", "SPACE": "space", "BACKSPACE": "BackSpace", "DELETE": "Delete"}


def _keys(keys: Any) -> str | None:
    if not isinstance(keys, list) or not keys:
        return None
    return "+".join(_KEY_NAMES.get(str(k).upper(), str(k).lower() if len(str(k)) == 1 else str(k)) for k in keys)


def map_action(a: dict[str, Any]) -> Action:
    """One ``computer_call`` action as a trajcheck action."""
    kind = str(a.get("type", ""))
    extra: dict[str, Any] = {"tool_action": kind, "input": a}
    x, y = num(a.get("x")), num(a.get("y"))
    if isinstance(a.get("keys"), list) and kind != "keypress":
        extra["modifiers"] = _keys(a["keys"])  # keys held during a click, scroll, move or drag
    if kind == "click":
        return Action(_BUTTONS.get(str(a.get("button", "left")), "CLICK"), x=x, y=y, extra=extra)
    if kind == "double_click":
        return Action("DOUBLE_CLICK", x=x, y=y, extra=extra)
    if kind == "scroll":
        extra.update(scroll_x=a.get("scroll_x"), scroll_y=a.get("scroll_y"))
        return Action("SCROLL", x=x, y=y, extra=extra)
    if kind == "type":
        return Action("TYPE", text=a.get("text") if isinstance(a.get("text"), str) else None, extra=extra)
    if kind == "keypress":
        return Action("KEY_PRESS", keys=_keys(a.get("keys")), extra=extra)
    if kind == "move":
        return Action("MOUSE_MOVE", x=x, y=y, extra=extra)
    if kind == "drag":
        path = [p for p in a.get("path") or [] if isinstance(p, dict)]
        end = path[-1] if path else {}
        if path:
            extra["start"] = [path[0].get("x"), path[0].get("y")]
        return Action("DRAG", x=num(end.get("x")), y=num(end.get("y")), extra=extra)
    if kind in ("wait", "screenshot"):
        return Action("WAIT", extra=extra)
    return Action("UNKNOWN", x=x, y=y, extra={**extra, "raw": kind})  # the caller warns, naming it
