"""BrowserGym's high-level actions: the code an agent returns (``click("a51")``, ``fill("b12", "text")``),
read with :mod:`ast` (literal arguments only, never evaluated) and mapped to trajcheck's action types."""

from __future__ import annotations

import ast
import re
from typing import Any

from ....base.problems import Slug
from ....schemas.records import Action

from ...kit.reading import Problems

__all__ = ["ACTION_ROWS", "DONE_CALLS", "PARAMS", "ActionParseError", "class_of", "map_call", "parse_calls",
           "read_action", "split_action"]

#: Positional parameters of BrowserGym's high-level action set (browsergym/core/action/functions.py).
PARAMS: dict[str, tuple[str, ...]] = {
    "noop": ("wait_ms",), "send_msg_to_user": ("text",), "report_infeasible": ("reason",),
    "scroll": ("delta_x", "delta_y"), "fill": ("bid", "value"), "select_option": ("bid", "options"),
    "click": ("bid", "button", "modifiers"), "dblclick": ("bid", "button", "modifiers"), "hover": ("bid",),
    "press": ("bid", "key_comb"), "focus": ("bid",), "clear": ("bid",), "drag_and_drop": ("from_bid", "to_bid"),
    "upload_file": ("bid", "file"), "mouse_move": ("x", "y"), "mouse_up": ("x", "y", "button"),
    "mouse_down": ("x", "y", "button"), "mouse_click": ("x", "y", "button"), "mouse_dblclick": ("x", "y", "button"),
    "mouse_drag_and_drop": ("from_x", "from_y", "to_x", "to_y"), "mouse_upload_file": ("x", "y", "file"),
    "keyboard_down": ("key",), "keyboard_up": ("key",), "keyboard_press": ("key",), "keyboard_type": ("text",),
    "keyboard_insert_text": ("text",), "goto": ("url",), "go_back": (), "go_forward": (), "new_tab": (),
    "tab_close": (), "tab_focus": ("index",),
}
DONE_CALLS = ("send_msg_to_user", "report_infeasible")


class ActionParseError(ValueError):
    """The action text is not a sequence of literal calls of action functions; the message says why."""


def split_action(text: str) -> tuple[str, str | None]:
    """(code, reasoning): the last fenced block of ``text`` and the text around it; a text
    without a fence is taken as code (AgentLab keeps the reasoning in agent_info.think)."""
    fences = list(re.finditer(r"```(?:[A-Za-z0-9_+-]*[ \t]*\n)?(.*?)```", text, re.S))
    if not fences:
        return text.strip(), None
    m = fences[-1]
    reasoning = (text[:m.start()] + text[m.end():]).strip()
    return m.group(1).strip(), reasoning or None


def parse_calls(code: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse BrowserGym action code with :mod:`ast` (never eval): a sequence of calls of plain
    functions on literal arguments. Returns [(function, {param: value})]."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise ActionParseError(f"not Python: {exc.msg}") from None
    out = []
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            raise ActionParseError(f"not a call of an action function: {ast.unparse(stmt)[:80]!r}")
        name = call.func.id
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except (ValueError, SyntaxError, TypeError):
            raise ActionParseError(f"{name}(...) has an argument that is not a literal") from None
        if any(k.arg is None for k in call.keywords):
            raise ActionParseError(f"{name}(**...) is not a literal call")
        names = PARAMS.get(name, ())
        bound: dict[str, Any] = {}
        for i, v in enumerate(args):
            bound[names[i] if i < len(names) else f"arg{i}"] = v
        bound.update(kwargs)
        out.append((name, bound))
    if not out:
        raise ActionParseError("no action call")
    return out


def map_call(name: str, a: dict[str, Any]) -> Action:
    """One BrowserGym call as a trajcheck action."""
    bid = a.get("bid")
    el = None if bid is None else str(bid)
    extra: dict[str, Any] = {"function": name, "args": a}
    if el is not None:
        extra["element"] = el

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    if name == "click":
        return Action("CLICK", element=el, extra=extra)
    if name == "dblclick":
        return Action("DOUBLE_CLICK", element=el, extra=extra)
    if name == "fill":
        return Action("TYPE", text=s(a.get("value")), element=el, extra=extra)
    if name in ("keyboard_type", "keyboard_insert_text"):
        return Action("TYPE", text=s(a.get("text")), extra=extra)
    if name == "press":
        return Action("KEY_PRESS", keys=s(a.get("key_comb")), element=el, extra=extra)
    if name == "keyboard_press":
        return Action("KEY_PRESS", keys=s(a.get("key")), extra=extra)
    if name == "scroll":
        dy = a.get("delta_y")
        if isinstance(dy, (int, float)) and dy:
            extra["direction"] = "down" if dy > 0 else "up"
        return Action("SCROLL", extra=extra)
    if name == "goto":
        return Action("NAVIGATE", url=s(a.get("url")), extra=extra)
    if name == "go_back":
        return Action("NAVIGATE", extra={**extra, "navigation": "back"})
    if name == "go_forward":
        return Action("NAVIGATE", extra={**extra, "navigation": "forward"})
    if name == "new_tab":
        return Action("NAVIGATE", url="about:blank", extra={**extra, "navigation": "new_tab"})
    if name == "send_msg_to_user":
        return Action("DONE", text=s(a.get("text")), extra=extra)
    if name == "report_infeasible":
        return Action("DONE", text=s(a.get("reason")), extra={**extra, "infeasible": True})
    if name == "noop":
        return Action("WAIT", extra=extra)
    if name in ("mouse_click", "mouse_dblclick"):
        x, y = a.get("x"), a.get("y")
        xy = (float(x), float(y)) if isinstance(x, (int, float)) and isinstance(y, (int, float)) else (None, None)
        return Action("CLICK" if name == "mouse_click" else "DOUBLE_CLICK", x=xy[0], y=xy[1], extra=extra)
    return Action(name.upper(), element=el, extra=extra)


def class_of(v: Any) -> str:
    """The class a pickled value stood for (its stand-in's ``__class__``), for messages."""
    if isinstance(v, dict) and isinstance(v.get("__class__"), str):
        return v["__class__"]
    return type(v).__name__


def read_action(raw: Any, rel: str, extra: dict[str, Any], problems: Problems) -> tuple[Action, str | None]:
    """A step's action and the text around its code; several calls are listed in ``extra["calls"]``."""
    if not isinstance(raw, str):
        problems.warn(Slug.ACTION_UNPARSED, f"the action is a {class_of(raw)}, not text", file=rel, field="action",
                      hint="the step is scored as an UNKNOWN action")
        return Action("UNKNOWN", extra={"raw": str(raw)[:2000]}), None
    code, reasoning = split_action(raw)
    try:
        calls = parse_calls(code)
    except ActionParseError as exc:
        problems.warn(Slug.ACTION_UNPARSED, f"cannot read the action {code[:100]!r}: {exc}", file=rel, field="action",
                      hint="the step is scored as an UNKNOWN action")
        return Action("UNKNOWN", extra={"raw": raw}), reasoning
    fn, args = calls[0]
    action = map_call(fn, args)
    action = Action(action.type, action.x, action.y, action.keys, action.text, action.url, action.element,
                    {**action.extra, "call": code})
    if len(calls) > 1:
        extra["calls"] = [{"function": f, "args": a} for f, a in calls]
        problems.warn(Slug.MULTI_ACTION, f"{len(calls)} action calls in one step; the first ({fn}) is the step's "
                      "action, all are kept in extra.calls", file=rel, field="action",
                      hint="trajcheck scores one action per step")
    return action, reasoning


#: How :func:`map_call` maps the calls, for the reader's field-mapping table.
ACTION_ROWS: tuple[tuple[str, str], ...] = (
    ("`click(bid)`, `dblclick(bid)`", "`CLICK`, `DOUBLE_CLICK`; `element = bid`"),
    ("`fill(bid, value)`, `keyboard_type(text)`, `keyboard_insert_text(text)`", "`TYPE`, `text`"),
    ("`press(bid, key_comb)`, `keyboard_press(key)`", "`KEY_PRESS`, `keys` (`Enter` is a submit key)"),
    ("`scroll(dx, dy)`", "`SCROLL`, `extra.args`, `extra.direction`"),
    ("`goto(url)`", "`NAVIGATE`, `url`"),
    ("`go_back()`, `go_forward()`, `new_tab()`",
     "`NAVIGATE`, `extra.navigation` (`new_tab`: `url = about:blank`)"),
    ("`send_msg_to_user(text)`", "`DONE`, `text`"),
    ("`report_infeasible(reason)`", "`DONE`, `text`, `extra.infeasible = true` (not a success claim)"),
    ("`noop(wait_ms)`", "`WAIT`"),
    ("`mouse_click(x, y)`, `mouse_dblclick(x, y)`", "`CLICK`, `DOUBLE_CLICK` with `x`, `y`"),
    ("other calls (`select_option`, `focus`, `hover`, `clear`, `tab_focus`, ...)",
     "their name upper-cased (`SELECT_OPTION`, ...), `extra.args`"),
    ("every call", "`extra.function`, `extra.args`, `extra.call` (the code)"),
)
