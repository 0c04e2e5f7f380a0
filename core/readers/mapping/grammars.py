"""A mapping's ``[step] grammar``: the action grammars trajcheck's own readers parse, applied to the value a
mapping's ``action`` field finds (a reply, a tool call, a list of tool calls, pyautogui code).

* ``ui-tars``: a UI-TARS reply (``Thought: ... Action: click(start_box='(100,200)')``), its first call;
* ``anthropic``: a ``computer`` tool call (``{name, input: {action, coordinate}}``), its ``input``, or a list
  of them (each call that acts is its own step, :func:`parse_all`);
* ``openai``: a ``computer_call`` (``{action: {type, x, y}}``), its action, or a list of them;
* ``pyautogui``: Python code calling pyautogui (read with :mod:`ast`, never run), or ``DONE`` / ``FAIL`` / ``WAIT``;
* ``webarena``: WebArena's and VisualWebArena's id-based actions (``click [8]``, ``type [12] [text] [1]``,
  ``scroll [down]``, ``goto [url]``, ``stop [answer]``...), alone (the harness's parsed action) or in a reply's
  first ``` fence, as ``browser_env/actions.py`` ``create_id_based_action`` reads them: the element id is the
  action's target (``element``), never a point.

Strings holding JSON or a Python literal are parsed first (safely, never evaluated). The action's points
stay in the log's space: the reader converts them with the run's coordinate space.
"""

from __future__ import annotations

import re
from typing import Any

from ..adapters.anthropic import actions as anthropic_actions
from ..adapters.openai import actions as openai_actions
from ..adapters.osworld import actions as osworld_actions
from ..adapters.ui_tars import actions as ui_tars_actions
from ..kit.reading import Problems
from .fields import parse_embedded
from ...schemas.records import Action

GRAMMARS = ("ui-tars", "anthropic", "openai", "pyautogui", "webarena")


def _calls(v: Any) -> list[Any]:
    v = parse_embedded(v, "auto") if isinstance(v, str) and v.strip()[:1] in "[{" else v
    return v if isinstance(v, list) else [v] if v is not None else []


def _anthropic(v: Any) -> tuple[list[Action], str | None]:
    calls = [c for c in _calls(v) if isinstance(c, dict)]
    acts: list[Action] = []
    for c in calls:
        if "name" in c and isinstance(c.get("input"), dict):
            acts.append(anthropic_actions.tool_action(c, 0, Problems("")))
        elif "action" in c:
            acts.append(anthropic_actions.map_action(c))
    return acts, None


def _openai(v: Any) -> tuple[list[Action], str | None]:
    acts = []
    for c in _calls(v):
        if isinstance(c, dict):
            inner: Any = c.get("action") if isinstance(c.get("action"), dict) else c
            batch: list[Any] = c["actions"] if isinstance(c.get("actions"), list) else [inner]
            acts += [openai_actions.map_action(a) for a in batch if isinstance(a, dict)]
    return acts, None


#: Calls that only look (a screenshot, a read) or call a tool: no step of their own beside calls that act.
LOOKS = ("WAIT", "READ", "TOOL")


def _acting(acts: list[Action]) -> list[Action]:
    """The calls that act, in order (a look-only call is kept only when there is nothing else)."""
    return [a for a in acts if a.type not in LOOKS] or acts[:1]


def _ui_tars(v: Any) -> tuple[list[Action], str | None]:
    if isinstance(v, dict):
        if "action_type" in v:
            inputs: dict[str, Any] = v["action_inputs"] if isinstance(v.get("action_inputs"), dict) else {}
            return [ui_tars_actions.map_action(str(v["action_type"]), inputs, fractions=True)], None
        flat = ui_tars_actions.map_flat(v)
        return ([flat] if flat else []), None
    if not isinstance(v, str):
        return [], None
    thought, calls, _bad = ui_tars_actions.parse_reply(v)
    if not calls and "Action" not in v:
        got = ui_tars_actions.parse_call(v)  # the action part alone: click(start_box='(1,2)')
        calls = [got] if got else []
    return [ui_tars_actions.map_action(k, a) for k, a in calls], thought


def _pyautogui(v: Any) -> tuple[list[Action], str | None]:
    if not isinstance(v, str):
        return [], None
    code = v.strip()
    if code.upper() in osworld_actions.SPECIAL:
        return [Action(osworld_actions.SPECIAL[code.upper()])], None
    act, _names = osworld_actions.parse_pyautogui(code)
    return ([act] if act else []), None


#: WebArena's id-based action names (lower case) -> trajcheck's types; ``none`` is the harness's own no-op for a
#: reply it could not parse (it does nothing), ``stop`` the answer.
WEBARENA = {"click": "CLICK", "hover": "MOUSE_MOVE", "type": "TYPE", "press": "KEY_PRESS", "scroll": "SCROLL",
            "goto": "NAVIGATE", "new_tab": "NAVIGATE", "go_back": "NAVIGATE", "go_forward": "NAVIGATE",
            "tab_focus": "NAVIGATE", "close_tab": "NAVIGATE", "stop": "DONE", "none": "WAIT"}
_WA_FENCE = re.compile(r"```(.*?)```", re.S)
_WA_ID = re.compile(r"^\w+ ?\[(\d+)\]")
_WA_TYPE = re.compile(r"^type ?\[(\d+)\] ?\[(.+)\] ?\[(\d+)\]", re.S)
_WA_ARG = re.compile(r"^\w+ ?\[(.+)\]", re.S)
_WA_SCROLL = re.compile(r"^scroll ?\[?(up|down)\]?", re.I)
#: Longest action string the grammar reads (a parsed action is one line; a reply is cut).
MAX_WEBARENA_CHARS = 100_000


def _webarena(v: Any) -> tuple[list[Action], str | None]:
    if not isinstance(v, str):
        return [], None
    text = v[:MAX_WEBARENA_CHARS]
    fence = _WA_FENCE.search(text)  # a reply: the harness reads its first fenced action
    s = (fence.group(1) if fence else text).strip()
    if not s:
        return [], None
    name = (s.split("[", 1)[0] if "[" in s else s.split()[0]).strip().lower()
    t = WEBARENA.get(name)
    extra: dict[str, Any] = {"call": name}
    if t is None:
        return [Action("UNKNOWN", extra=extra)], None
    arg = _WA_ARG.match(s)
    value = arg.group(1).strip() if arg else None
    if name in ("click", "hover"):
        el = _WA_ID.match(s)
        return [Action(t if el else "UNKNOWN", element=el.group(1) if el else None, extra=extra)], None
    if name == "type":
        m = _WA_TYPE.match(s if s.rstrip().endswith(("[0]", "[1]")) else s + " [1]")  # enter is pressed by default
        if m is None:
            return [Action("UNKNOWN", extra=extra)], None
        return [Action(t, text=m.group(2), element=m.group(1), extra={**extra, "press_enter": m.group(3) == "1"})], None
    if name == "press":
        return [Action(t if value else "UNKNOWN", keys=value, extra=extra)], None
    if name == "scroll":
        d = _WA_SCROLL.match(s)
        more = {"direction": d.group(1).lower()} if d else {}
        return [Action(t if d else "UNKNOWN", extra={**extra, **more})], None
    if name == "goto":
        return [Action(t if value else "UNKNOWN", url=value, extra=extra)], None
    if name == "tab_focus":
        return [Action(t, extra={**extra, "navigation": name, "page_number": value})], None
    if name in ("new_tab", "go_back", "go_forward", "close_tab"):
        return [Action(t, url="about:blank" if name == "new_tab" else None, extra={**extra, "navigation": name})], None
    if name == "stop":
        return [Action(t, text=value or "", extra=extra)], None
    return [Action(t, extra=extra)], None


_PARSERS = {"ui-tars": _ui_tars, "anthropic": _anthropic, "openai": _openai, "pyautogui": _pyautogui,
            "webarena": _webarena}


def parse_all(grammar: str, value: Any) -> tuple[list[Action], str | None]:
    """Every action ``value`` holds in ``grammar``, in order (look-only calls beside acting ones left out; empty
    when none parses), and the reply's thought where the grammar has one (UI-TARS)."""
    if value is None:
        return [], None
    try:
        acts, thought = _PARSERS[grammar](value)
    except (ValueError, TypeError, KeyError, RecursionError):
        return [], None
    return _acting(acts), thought


def parse(grammar: str, value: Any) -> tuple[Action | None, str | None]:
    """The first action ``value`` holds in ``grammar`` (None when it holds none that parses), with the number of
    actions in ``extra.calls`` when it holds several, and the reply's thought where the grammar has one."""
    acts, thought = parse_all(grammar, value)
    if not acts:
        return None, thought
    a = acts[0]
    return (Action(a.type, a.x, a.y, a.keys, a.text, a.url, a.element, {**a.extra, "calls": len(acts)})
            if len(acts) > 1 else a), thought
