"""A mapping's ``[step] grammar``: the action grammars trajcheck's own readers parse, applied to the value a
mapping's ``action`` field finds (a reply, a tool call, a list of tool calls, pyautogui code).

* ``ui-tars``: a UI-TARS reply (``Thought: ... Action: click(start_box='(100,200)')``), its first call;
* ``anthropic``: a ``computer`` tool call (``{name, input: {action, coordinate}}``), its ``input``, or a list
  of them (the first computer-use call; the others are counted in ``extra.calls``);
* ``openai``: a ``computer_call`` (``{action: {type, x, y}}``), its action, or a list of them;
* ``pyautogui``: Python code calling pyautogui (read with :mod:`ast`, never run), or ``DONE`` / ``FAIL`` / ``WAIT``.

Strings holding JSON or a Python literal are parsed first (safely, never evaluated). The action's points
stay in the log's space: the reader converts them with the run's coordinate space.
"""

from __future__ import annotations

from typing import Any

from .adapters import anthropic_actions, openai_actions, osworld_actions, ui_tars_actions
from .kit.reading import Problems
from .mapping_fields import parse_embedded
from ..schemas.records import Action

GRAMMARS = ("ui-tars", "anthropic", "openai", "pyautogui")


def _calls(v: Any) -> list[Any]:
    v = parse_embedded(v, "auto") if isinstance(v, str) and v.strip()[:1] in "[{" else v
    return v if isinstance(v, list) else [v] if v is not None else []


def _anthropic(v: Any) -> tuple[Action | None, str | None]:
    calls = [c for c in _calls(v) if isinstance(c, dict)]
    acts: list[Action] = []
    for c in calls:
        if "name" in c and isinstance(c.get("input"), dict):
            acts.append(anthropic_actions.tool_action(c, 0, Problems("")))
        elif "action" in c:
            acts.append(anthropic_actions.map_action(c))
    return _first(acts), None


def _openai(v: Any) -> tuple[Action | None, str | None]:
    acts = []
    for c in _calls(v):
        if isinstance(c, dict):
            inner: Any = c.get("action") if isinstance(c.get("action"), dict) else c
            batch: list[Any] = c["actions"] if isinstance(c.get("actions"), list) else [inner]
            acts += [openai_actions.map_action(a) for a in batch if isinstance(a, dict)]
    return _first(acts), None


def _first(acts: list[Action]) -> Action | None:
    """The first action that acts (a screenshot-only call is kept only when there is nothing else)."""
    if not acts:
        return None
    main = next((a for a in acts if a.type not in ("WAIT", "READ", "TOOL")), acts[0])
    return Action(main.type, main.x, main.y, main.keys, main.text, main.url, main.element,
                  {**main.extra, "calls": len(acts)} if len(acts) > 1 else main.extra)


def _ui_tars(v: Any) -> tuple[Action | None, str | None]:
    if isinstance(v, dict):
        if "action_type" in v:
            inputs: dict[str, Any] = v["action_inputs"] if isinstance(v.get("action_inputs"), dict) else {}
            return ui_tars_actions.map_action(str(v["action_type"]), inputs, fractions=True), None
        return ui_tars_actions.map_flat(v), None
    if not isinstance(v, str):
        return None, None
    thought, calls, _bad = ui_tars_actions.parse_reply(v)
    if not calls and "Action" not in v:
        got = ui_tars_actions.parse_call(v)  # the action part alone: click(start_box='(1,2)')
        calls = [got] if got else []
    acts = [ui_tars_actions.map_action(k, a) for k, a in calls]
    return _first(acts), thought


def _pyautogui(v: Any) -> tuple[Action | None, str | None]:
    if not isinstance(v, str):
        return None, None
    code = v.strip()
    if code.upper() in osworld_actions.SPECIAL:
        return Action(osworld_actions.SPECIAL[code.upper()]), None
    act, _names = osworld_actions.parse_pyautogui(code)
    return act, None


_PARSERS = {"ui-tars": _ui_tars, "anthropic": _anthropic, "openai": _openai, "pyautogui": _pyautogui}


def parse(grammar: str, value: Any) -> tuple[Action | None, str | None]:
    """The action ``value`` holds in ``grammar`` (None when it holds none that parses) and the reply's thought
    where the grammar has one (UI-TARS)."""
    if value is None:
        return None, None
    try:
        return _PARSERS[grammar](value)
    except (ValueError, TypeError, KeyError, RecursionError):
        return None, None
