"""OSWorld's actions: pyautogui code strings, read with :mod:`ast` and never run, and ``computer_13`` dicts.

The step's action is the code's first call that is not a pointer move, with literal coordinates only (a
computed one gives no point rather than half of one); ``moveTo(x, y)`` before a coordinate-less click gives
the click its point, and ``typewrite(...)`` followed by ``press('enter')`` is the Enter (the submit is what
the perceptual check needs), with the text kept.
"""

from __future__ import annotations

import ast
from typing import Any

from ....schemas.records import Action

from ...kit.reading import num

#: pyautogui calls and the trajcheck action type each maps to (``click`` with ``clicks=2`` / ``button='right'``
#: is a DOUBLE_CLICK / RIGHT_CLICK).
PYAUTOGUI = {
    "click": "CLICK", "leftClick": "CLICK", "doubleClick": "DOUBLE_CLICK", "tripleClick": "TRIPLE_CLICK",
    "rightClick": "RIGHT_CLICK", "middleClick": "MIDDLE_CLICK", "moveTo": "MOVE", "moveRel": "MOVE",
    "dragTo": "DRAG", "dragRel": "DRAG", "press": "KEY_PRESS", "hotkey": "KEY_PRESS", "keyDown": "KEY_DOWN",
    "keyUp": "KEY_UP", "typewrite": "TYPE", "write": "TYPE", "scroll": "SCROLL", "hscroll": "SCROLL",
    "vscroll": "SCROLL", "mouseDown": "MOUSE_DOWN", "mouseUp": "MOUSE_UP",
}
SPECIAL = {"DONE": "DONE", "FAIL": "FAIL", "WAIT": "WAIT"}
#: computer_13 action types that are already trajcheck's.
COMPUTER_13 = {"CLICK": "CLICK", "DOUBLE_CLICK": "DOUBLE_CLICK", "RIGHT_CLICK": "RIGHT_CLICK", "TYPING": "TYPE",
               "PRESS": "KEY_PRESS", "HOTKEY": "KEY_PRESS", "SCROLL": "SCROLL", "MOVE_TO": "MOVE",
               "DRAG_TO": "DRAG", "MOUSE_DOWN": "MOUSE_DOWN", "MOUSE_UP": "MOUSE_UP", "KEY_DOWN": "KEY_DOWN",
               "KEY_UP": "KEY_UP", "WAIT": "WAIT", "DONE": "DONE", "FAIL": "FAIL"}


def _const(node: ast.AST) -> Any:
    """A literal argument (number, string, negative number, list of strings), else None."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _point(args: list[Any], kw: dict[str, Any], i: int = 0) -> tuple[float | None, float | None]:
    """Literal x, y at positional ``i``/``i+1`` or keywords x=/y= (also a pair ``(x, y)`` as x); a computed
    coordinate (a variable, an expression) gives no point rather than half of one."""
    xa = kw.get("x", args[i] if len(args) > i else None)
    if isinstance(xa, (tuple, list)) and len(xa) == 2 and "y" not in kw:
        x, y = num(xa[0]), num(xa[1])
    else:
        x, y = num(xa), num(kw.get("y", args[i + 1] if len(args) > i + 1 else None))
    return (x, y) if x is not None and y is not None else (None, None)


def _has_coords(call: ast.Call, i: int = 0) -> bool:
    """The call passes a coordinate at all (literal or computed)."""
    return len(call.args) > i or any(k.arg in ("x", "y") for k in call.keywords)


def _calls(code: str) -> list[tuple[str, ast.Call]] | None:
    """The ``pyautogui.<name>(...)`` calls of ``code`` in source order; None when it is not Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls: list[tuple[str, ast.Call]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "pyautogui":
            calls.append((node.func.attr, node))
    calls.sort(key=lambda c: (c[1].lineno, c[1].col_offset))
    return calls


def parse_pyautogui(code: str) -> tuple[Action | None, list[str]]:
    """The action of ``code`` (None when it has none) and the names of every pyautogui call.

    The action is the first call that is not a pointer move (click, key, typing, scroll, drag, ...); a
    ``moveTo(x, y)`` before it gives a click, scroll or mouseDown without coordinates its point (and a drag its
    start). Code that only moves the pointer is a MOVE."""
    calls = _calls(code)
    if calls is None:
        return None, []
    names = [n for n, _ in calls]
    mouse: tuple[float | None, float | None] | None = None  # where the code's moveTo calls put the pointer
    move: Action | None = None
    for name, call in calls:
        typ = PYAUTOGUI.get(name)
        if typ is None:
            continue
        args = [_const(a) for a in call.args]
        kw = {k.arg: _const(k.value) for k in call.keywords if k.arg}
        if typ != "MOVE":
            return _acting(name, typ, call, args, kw, mouse, calls), names
        if name == "moveTo":
            x, y = _point(args, kw)
            mouse = (x, y) if x is not None else None
            move = move or Action(type=typ, x=x, y=y, extra={"call": name})
        else:  # moveRel: relative to a position the code does not state
            mouse = None
            move = move or Action(type=typ, extra={"call": name, "offset": [num(a) for a in args[:2]]})
    return move, names


def _acting(name: str, typ: str, call: ast.Call, args: list[Any], kw: dict[str, Any],
            mouse: tuple[float | None, float | None] | None, calls: list[tuple[str, ast.Call]]) -> Action:
    """The action of the code's first call that is not a pointer move; ``mouse`` is where earlier moveTo calls
    left the pointer, ``calls`` all of the code's calls (a later press('enter') makes typing a submit)."""
    extra: dict[str, Any] = {"call": name}
    x, y = _point(args, kw)
    if typ in ("CLICK", "DOUBLE_CLICK", "TRIPLE_CLICK", "RIGHT_CLICK", "MIDDLE_CLICK", "MOUSE_DOWN",
               "MOUSE_UP") and not _has_coords(call) and mouse is not None:
        (x, y), extra["point_from"] = mouse, "moveTo"
    if name == "click":  # click(x, y, clicks=1, interval=0.0, button='primary', ...)
        clicks = num(kw.get("clicks", args[2] if len(args) > 2 else None))
        button = kw.get("button", args[4] if len(args) > 4 else None)
        if button in ("right", "secondary"):
            typ = "RIGHT_CLICK"
        elif button == "middle":
            typ = "MIDDLE_CLICK"
        elif clicks == 2:
            typ = "DOUBLE_CLICK"
        elif clicks == 3:
            typ = "TRIPLE_CLICK"
    if typ == "KEY_PRESS":
        keys = [a for a in (args if name == "hotkey" else args[:1]) if isinstance(a, str)]
        if name == "press" and args and isinstance(args[0], list):
            keys = [k for k in args[0] if isinstance(k, str)]
        keys = keys or ([kw["keys"]] if isinstance(kw.get("keys"), str) else [])
        return Action(type=typ, keys="+".join(keys) or None, extra=extra)
    if typ == "TYPE":
        text = args[0] if args and isinstance(args[0], str) else kw.get("message")
        if isinstance(text, list):
            text = "".join(t for t in text if isinstance(t, str))
        text = text if isinstance(text, str) else None
        if any(_submits(n, c) for n, c in calls):
            # typewrite(...) then press('enter'): the step submits; the key decides the check
            return Action(type="KEY_PRESS", keys="enter", text=text, extra=extra)
        return Action(type=typ, text=text, extra=extra)
    if typ == "SCROLL":  # scroll(clicks, x=None, y=None)
        extra["clicks"] = num(kw.get("clicks", args[0] if args else None))
        x, y = _point(args, kw, 1)
        if not _has_coords(call, 1) and mouse is not None:
            (x, y), extra["point_from"] = mouse, "moveTo"
        return Action(type=typ, x=x, y=y, extra=extra)
    if name == "dragTo" and mouse is not None:
        extra["from"] = list(mouse)
    if name == "dragRel":
        extra["offset"] = [x, y]
        x = y = None
    return Action(type=typ, x=x, y=y, extra=extra)


def _submits(name: str, call: ast.Call) -> bool:
    """A press('enter') / press('return') call (the key that submits a form)."""
    if name != "press" or not call.args:
        return False
    key = _const(call.args[0])
    return isinstance(key, str) and key.lower() in ("enter", "return")


def computer13(d: dict[str, Any]) -> Action:
    """A ``computer_13`` action dict ``{action_type, x, y, ...}`` (or with ``parameters``) as an action."""
    t = str(d.get("action_type", "")).upper()
    typ = COMPUTER_13.get(t, t or "UNKNOWN")
    params = given if isinstance(given := d.get("parameters"), dict) else d
    keys = params.get("keys") if isinstance(params.get("keys"), list) else None
    key = params.get("key")
    return Action(type=typ, x=num(params.get("x")), y=num(params.get("y")),
                  keys="+".join(str(k) for k in keys) if keys else (str(key) if key else None),
                  text=params.get("text") if isinstance(params.get("text"), str) else None,
                  extra={"raw": d})
