"""Which logs are UI-TARS logs, by the shape of their parsed data (:mod:`trajcheck.readers.kit.shape`), never by a
word found somewhere in the file: a session log's steps carry a reply in UI-TARS's grammar or a parsed action; an
Agent TARS event stream's tool calls carry a UI-TARS action; a UI-TARS-desktop session's turns come ``from``
human and gpt; an exported report embeds a ``ui_tars_web_dump`` script.

A chat list of ``{role, content}`` messages is none of these, whatever its replies say: this reader cannot read it
(it has no screenshots by step, no parsed actions), so it does not claim it.
"""

from __future__ import annotations

import re
from typing import Any

from .actions import parse_call
from .logs import REPLY_KEYS, SHOT_KEYS

#: A reply in UI-TARS's grammar: ``Action: click(start_box='(10,20)')`` (also with a full-width colon), or the
#: box and point tokens its calls take.
_REPLY = re.compile(r"Action\s*[:\uff1a]\s*[a-z_]+\(|start_box\s*=|start_point\s*=|<point>")
_DUMP = re.compile(rb"<script[^<>]{0,512}\bui_tars_web_dump\b[^<>]{0,512}>", re.I)
_EVENTS = frozenset({"user_message", "assistant_message", "tool_call", "tool_result", "environment_input",
                     "agent_run_start", "agent_run_end", "system"})
#: How many of a log's steps are looked at.
_SAMPLE = 20


def _reply(v: Any) -> bool:
    return isinstance(v, str) and _REPLY.search(v) is not None


def _parsed(p: Any) -> bool:
    """UI-TARS's parsed action (``{action_type, action_inputs}``), one or a list."""
    items = p if isinstance(p, list) else [p]
    return any(isinstance(x, dict) and isinstance(x.get("action_type"), str) and
               isinstance(x.get("action_inputs", {}), dict) for x in items)


def _step(d: Any) -> bool:
    """A session log's step: a reply in UI-TARS's grammar, UI-TARS's parsed action, or the keys UI-TARS harnesses
    log a step with (``model_reply``; ``parsed_action`` beside a reply)."""
    if not isinstance(d, dict):
        return False
    if "model_reply" in d or ("parsed_action" in d and any(k in d for k in REPLY_KEYS)):
        return True  # the keys UI-TARS harnesses log a step with, whether or not its reply parses
    return _parsed(d.get("parsed_action")) or _parsed(d.get("action")) or any(_reply(d.get(k)) for k in REPLY_KEYS)


def _mostly_steps(items: list[Any]) -> bool:
    """Steps are objects (most of them), and one at least speaks UI-TARS (a harness may have logged some steps
    without their reply: the side file fills them)."""
    sample = items[:_SAMPLE]
    objects = sum(isinstance(x, dict) for x in sample)
    return 2 * objects >= len(sample) and any(_step(x) for x in sample)


def _tool_call(e: dict[str, Any]) -> bool:
    args = e.get("arguments")
    action = args.get("action") if isinstance(args, dict) else None
    return isinstance(action, str) and parse_call(action) is not None


def shape(value: Any) -> str | None:
    """Which UI-TARS log ``value`` is, or None."""
    if isinstance(value, dict):
        for k in ("steps", "trajectory", "history"):
            if isinstance(value.get(k), list) and _mostly_steps(value[k]):
                return f"a UI-TARS session log (its {k} carry UI-TARS replies or parsed actions)"
        turns = value.get("conversations")
        if isinstance(turns, list) and any(isinstance(c, dict) and c.get("from") in ("human", "gpt") for c in turns) \
                and any(isinstance(c, dict) and (_parsed(c.get("predictionParsed")) or _reply(c.get("value")) or
                                                 "screenshotBase64" in c) for c in turns[:_SAMPLE * 5]):
            return "a UI-TARS-desktop session (conversations from human and gpt)"
        return None
    if not isinstance(value, list):
        return None
    if _mostly_steps(value):
        return "a UI-TARS session log (a list of steps with UI-TARS replies or parsed actions)"
    events = [e for e in value[:_SAMPLE * 5] if isinstance(e, dict)]
    if events and all(e.get("type") in _EVENTS and "id" in e for e in events) and \
            any(e.get("type") == "tool_call" and _tool_call(e) for e in events):
        return "an Agent TARS event stream (its tool calls carry UI-TARS actions)"
    return None


def report(head: bytes) -> str | None:
    """An HTML report that UI-TARS-desktop exports: it embeds its session in a ``ui_tars_web_dump`` script."""
    return "a UI-TARS-desktop report (a ui_tars_web_dump script)" if _DUMP.search(head) else None


def has_screenshots(value: Any) -> bool:
    """The log names or holds its screenshots (read before a side file of the same steps)."""
    steps: Any = value
    if isinstance(value, dict):
        steps = next((value[k] for k in ("steps", "trajectory", "history", "conversations")
                      if isinstance(value.get(k), list)), [])
    return isinstance(steps, list) and any(isinstance(s, dict) and (any(k in s for k in SHOT_KEYS) or
                                                                   "screenshotBase64" in s) for s in steps[:_SAMPLE])
