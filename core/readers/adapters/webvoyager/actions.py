"""WebVoyager's actions: the ``Thought: ... Action: ...`` reply of its system prompt's grammar (the one
``extract_information`` in its utils.py reads), as a trajcheck action."""

from __future__ import annotations

import re
from typing import Any

from ....schemas.records import Action

__all__ = ["ACTION_ROWS", "GOOGLE_URL", "parse_reply"]

GOOGLE_URL = "https://www.google.com/"

# The grammar of WebVoyager's system prompt (and of extract_information in its utils.py).
_CLICK = re.compile(r"^Click\s*\[?\s*(\d+)\s*\]?\s*$", re.I)
_TYPE = re.compile(r"^Type\s*\[?\s*(\d+)\s*\]?\s*[;:]?\s*(.*)$", re.I | re.S)
_SCROLL = re.compile(r"^Scroll\s*\[?\s*(\d+|WINDOW)\s*\]?\s*[;:]?\s*\[?\s*(up|down)\s*\]?\s*$", re.I)
_ANSWER = re.compile(r"^ANSWER\s*[;:]?\s*(.*)$", re.S)
_THOUGHT = re.compile(r"Thought:\s*(.*?)\s*(?=Action:|$)", re.S)


def _strip_brackets(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == "[" and s[-1] == "]" and "[" not in s[1:-1]:
        s = s[1:-1].strip()
    return s


def parse_reply(reply: str) -> tuple[str | None, str | None, Action | None]:
    """(thought, raw action text, action) of one assistant reply; action None when it does not parse."""
    thought_m = _THOUGHT.search(reply)
    thought = thought_m.group(1).strip() if thought_m else None
    if "Action:" not in reply:
        return thought, None, None
    raw = reply.split("Action:", 1)[1]
    raw = re.split(r"Observation:|Thought:", raw, maxsplit=1)[0].strip()
    first = raw.splitlines()[0].strip() if raw else ""
    if m := _CLICK.match(first):
        n = int(m.group(1))
        return thought, raw, Action("CLICK", element=str(n), extra={"element": n})
    if m := _TYPE.match(raw):
        n = int(m.group(1))
        text = _strip_brackets(m.group(2))
        return thought, raw, Action("TYPE", text=text, element=str(n), extra={"element": n, "then_enter": True})
    if m := _SCROLL.match(first):
        target = m.group(1).upper()
        extra: dict[str, Any] = {"direction": m.group(2).lower(), "target": target}
        element = None
        if target != "WINDOW":
            extra["element"] = int(target)
            element = target
        return thought, raw, Action("SCROLL", element=element, extra=extra)
    if re.fullmatch(r"Wait\.?", first, re.I):
        return thought, raw, Action("WAIT")
    if re.fullmatch(r"Go\s*Back\.?", first, re.I):
        return thought, raw, Action("NAVIGATE", extra={"navigation": "back"})
    if re.fullmatch(r"Google\.?", first, re.I):
        return thought, raw, Action("NAVIGATE", url=GOOGLE_URL, extra={"navigation": "google"})
    if m := _ANSWER.match(raw):
        return thought, raw, Action("DONE", text=_strip_brackets(m.group(1)))
    return thought, raw, None


#: How :func:`parse_reply` maps the actions, for the reader's field-mapping table.
ACTION_ROWS: tuple[tuple[str, str], ...] = (
    ("K-th assistant reply, text after `Thought:`", "`steps[K-1].reasoning`"),
    ("`Action: Click [N]`", "`CLICK`, `element = N`, `extra.element = N`"),
    ("`Action: Type [N]; text`", "`TYPE`, `text`, `element = N` (`extra.then_enter`: WebVoyager presses Enter after "
                                 "typing)"),
    ("`Action: Scroll [N|WINDOW]; up|down`", "`SCROLL`, `extra.direction`, `extra.target` (`element` when N)"),
    ("`Action: Wait`", "`WAIT`"),
    ("`Action: GoBack`", "`NAVIGATE`, `extra.navigation = back`"),
    ("`Action: Google`", "`NAVIGATE`, `url = https://www.google.com/`, `extra.navigation = google`"),
    ("`Action: ANSWER; text`", "`DONE`, `text`"),
    ("any other action text", "`UNKNOWN`, `extra.raw` (warning `action_unparsed`)"),
)
