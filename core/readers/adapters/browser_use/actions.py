"""browser-use's actions: one ``{name: params}`` entry of ``model_output.action`` mapped to a trajcheck
action, the model's "brain" fields read as its reasoning, and what the state says of the element acted on."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import quote

from ....schemas.records import Action

__all__ = ["ACTION_ROWS", "POINT_ACTIONS", "actions_of", "bounds_center", "element_info", "map_action",
           "one_action", "reasoning_of"]

_SEARCH_URLS = {"google": "https://www.google.com/search?q=", "bing": "https://www.bing.com/search?q=",
                "duckduckgo": "https://duckduckgo.com/?q="}
_BRAIN_FIELDS = (("thinking", "Thinking"), ("evaluation_previous_goal", "Eval"),
                 ("valuation_previous_goal", "Eval"), ("memory", "Memory"), ("next_goal", "Next goal"))


#: Actions aimed at an element whose box gives the point of the action.
POINT_ACTIONS = frozenset({"CLICK", "DOUBLE_CLICK", "TYPE", "SELECT_OPTION"})


def bounds_center(el: Any) -> tuple[float, float] | None:
    """Centre of a newer interacted element's ``bounds`` {x, y, width, height} (CSS pixels of the
    viewport, the screenshot's coordinates), or None."""
    b = el.get("bounds") if isinstance(el, dict) else None
    if not isinstance(b, dict):
        return None
    try:
        x, y, w, h = (float(b[k]) for k in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None
    if not all(map(math.isfinite, (x, y, w, h))) or w < 0 or h < 0:
        return None
    return round(x + w / 2, 1), round(y + h / 2, 1)


def reasoning_of(mo: dict[str, Any]) -> str | None:
    """The model's thinking, evaluation, memory and next goal, one labelled line each."""
    brain = state if isinstance(state := mo.get("current_state"), dict) else mo
    parts = []
    seen = set()
    for key, label in _BRAIN_FIELDS:
        v = brain.get(key)
        if isinstance(v, str) and v.strip() and label not in seen:
            parts.append(f"{label}: {v.strip()}")
            seen.add(label)
    return "\n".join(parts) or None


def map_action(name: str, params: dict[str, Any]) -> Action:
    """One browser-use action ``{name: params}`` as a trajcheck action."""
    p = params
    idx = p.get("index")
    el = None if idx is None else str(idx)
    extra: dict[str, Any] = {"function": name, "args": p}
    if el is not None:
        extra["element"] = idx

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    if name in ("click_element", "click_element_by_index", "click"):
        x, y = p.get("coordinate_x"), p.get("coordinate_y")
        xy = (float(x), float(y)) if isinstance(x, (int, float)) and isinstance(y, (int, float)) \
            and not isinstance(x, bool) else (None, None)
        kind = "DOUBLE_CLICK" if p.get("num_clicks") == 2 else "CLICK"
        return Action(kind, x=xy[0], y=xy[1], element=el, extra=extra)
    if name in ("input_text", "input"):
        return Action("TYPE", text=s(p.get("text")), element=el, extra=extra)
    if name in ("go_to_url", "navigate", "open_tab"):
        if name == "open_tab" or p.get("new_tab") is True:
            extra["navigation"] = "new_tab"
        return Action("NAVIGATE", url=s(p.get("url")), extra=extra)
    if name in ("search_google", "search"):
        engine = str(p.get("engine") or ("google" if name == "search_google" else "duckduckgo")).lower()
        q = p.get("query")
        base = _SEARCH_URLS.get(engine)
        return Action("NAVIGATE", url=base + quote(str(q), safe='') if base and q is not None else None,
                      text=s(q), extra=extra)
    if name == "go_back":
        return Action("NAVIGATE", extra={**extra, "navigation": "back"})
    if name in ("scroll_down", "scroll_up", "scroll"):
        down = name == "scroll_down" or (name == "scroll" and p.get("down", True) is not False)
        return Action("SCROLL", element=el, extra={**extra, "direction": "down" if down else "up"})
    if name == "send_keys":
        return Action("KEY_PRESS", keys=s(p.get("keys")), extra=extra)
    if name == "done":
        if p.get("success") is False:
            extra["infeasible"] = True  # the agent stops without claiming success
        return Action("DONE", text=s(p.get("text")), extra=extra)
    if name in ("extract_content", "extract", "extract_structured_data", "extract_page_content"):
        return Action("EXTRACT", text=s(p.get("goal") or p.get("query")), extra=extra)
    if name == "wait":
        return Action("WAIT", extra=extra)
    return Action(name.upper(), element=el, extra=extra)


def actions_of(mo: Any) -> tuple[list[Any], str | None]:
    """The raw action entries of a model_output, or (entries, why they cannot be read)."""
    if not isinstance(mo, dict):
        return [], None
    acts = mo.get("action")
    if isinstance(acts, dict):
        return [acts], None
    if isinstance(acts, list):
        return acts, None if acts else "the action list is empty"
    return [], "model_output has no action"


def one_action(entry: Any) -> tuple[str, dict[str, Any]] | None:
    """``{name: params}`` (the element it acted on aside) as (name, params); None for another shape."""
    if not isinstance(entry, dict):
        return None
    keys = [k for k, v in entry.items() if v is not None and k != "interacted_element"]
    if len(keys) != 1:
        return None
    params = entry[keys[0]]
    if params == {} or params is True:
        params = {}
    if not isinstance(params, dict):
        return None
    return keys[0], params


def element_info(state: dict[str, Any], index: str) -> dict[str, Any] | None:
    """The xpath and text of element ``index`` from a 2024 state's selector_map and items."""
    out: dict[str, Any] = {}
    sm = state.get("selector_map")
    if isinstance(sm, dict) and isinstance(sm.get(index), str):
        out["xpath"] = sm[index]
    items = state.get("items")
    if isinstance(items, list):
        for it in items:
            if isinstance(it, dict) and str(it.get("index")) == index and isinstance(it.get("text"), str):
                out["text"] = it["text"][:500]
                break
    return out or None


#: How :func:`map_action` maps the actions, for the reader's field-mapping table.
ACTION_ROWS: tuple[tuple[str, str], ...] = (
    ("`click_element`, `click_element_by_index`, `click` `{index}`",
     "`CLICK`, `element = index` (`num_clicks: 2`: `DOUBLE_CLICK`; `coordinate_x/y`: `x`, `y`)"),
    ("`input_text`, `input` `{index, text}`", "`TYPE`, `text`, `element`"),
    ("`go_to_url`, `navigate`, `open_tab` `{url}`", "`NAVIGATE`, `url` (`extra.navigation = new_tab`)"),
    ("`search_google`, `search` `{query, engine}`", "`NAVIGATE`, `url` of the search, `text = query`"),
    ("`go_back`", "`NAVIGATE`, `extra.navigation = back`"),
    ("`scroll_down`, `scroll_up`, `scroll {down}`", "`SCROLL`, `extra.direction`"),
    ("`send_keys {keys}`", "`KEY_PRESS`, `keys`"),
    ("`done {text, success}`", "`DONE`, `text`; `success: false` adds `extra.infeasible` (no success claim)"),
    ("`extract_content`, `extract`, `extract_structured_data`",
     "`EXTRACT`, `text = goal/query` (an observation type)"),
    ("`wait`", "`WAIT`"),
    ("any other action", "its name upper-cased, `extra.args`"),
    ("every action", "`extra.function`, `extra.args`"),
)
