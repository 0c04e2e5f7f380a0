"""The perceptual verifier's high-risk classifier: the seed's table, plus submits by keyboard.

| action shape                                            | high-risk | rule |
|---------------------------------------------------------|-----------|------|
| KEY_PRESS with keys Return / Enter, or a chord ending in one (ctrl+Return) | yes | submit_key |
| KEY_PRESS with a save or send shortcut (``SHORTCUTS``: ctrl+s, cmd+s, cmd+shift+d...) | yes | shortcut |
| TYPE that submits: the runner pressed Enter after it (WebVoyager's ``Type [N]; text``), or the text ends in a newline | yes | typed_submit |
| CLICK whose reasoning contains a high-risk keyword      | yes       | keyword |
| CLICK without one                                       | no        | |
| everything else (WAIT, DONE, SCROLL, other TYPE, DOUBLE_CLICK, NAVIGATE, unknown) | no | |

Keyword matching is case-insensitive and word-aware: a keyword must start a word
("resend" and "unsaved" do not match "send" and "save"), may carry a suffix
("submitted", "deletes", "confirmation" match, as a substring test would), and the
space in a multi-word keyword matches any run of spaces, hyphens or underscores
("sign-in", "log  in").

A submit by keyboard shows its effect where a submit does (a new page, the form's message),
not at a click point: such steps have no point, so the verifier's global test decides.
"""  # noqa: E501  (the tables above are Markdown: one row a line)

from __future__ import annotations

import re
from dataclasses import dataclass

#: The seed's keywords, in its order.
HIGH_RISK_KEYWORDS: tuple[str, ...] = (
    "submit", "confirm", "buy", "purchase", "send", "delete", "save",
    "sign in", "log in", "login", "register", "checkout", "place order",
)

#: Key names that submit a form.
SUBMIT_KEYS = frozenset({"return", "enter"})

_KEYWORD_RE = re.compile(
    r"\b(" + "|".join(r"[\s_-]+".join(map(re.escape, k.split())) for k in HIGH_RISK_KEYWORDS) + r")\w*",
    re.IGNORECASE,
)


#: Save and send shortcuts (modifiers in any order, case-insensitive): a submit without Enter.
SHORTCUTS: frozenset[frozenset[str]] = frozenset(frozenset(k.split("+")) for k in (
    "ctrl+s", "cmd+s", "meta+s", "ctrl+shift+s", "cmd+shift+s",  # save
    "cmd+shift+d", "ctrl+shift+d",  # send (Apple Mail, and its Linux/Windows counterparts)
))
_MODIFIERS = {"control": "ctrl", "command": "cmd", "super": "meta", "win": "meta", "option": "alt"}

#: Keys that a runner records as a separate press after typing (WebVoyager's "then Enter").
TYPED_SUBMIT_KEYS = ("then_enter", "press_enter", "submit")


@dataclass(frozen=True)
class HighRisk:
    high_risk: bool
    rule: str | None = None  # "submit_key" | "shortcut" | "typed_submit" | "keyword" | None
    matched: str | None = None  # the key or keyword that made it high-risk


NOT_HIGH_RISK = HighRisk(False)


def is_submit_key(keys: str | None) -> bool:
    """True for "Enter", "Return" and chords ending in one ("ctrl+Return", "Shift+Enter")."""
    if not keys:
        return False
    last = keys.strip().split("+")[-1].strip().lower()
    return last in SUBMIT_KEYS


def keyword_in(text: str | None) -> str | None:
    """The first high-risk keyword in ``text`` (normalised to the seed's spelling), or None."""
    if not text:
        return None
    m = _KEYWORD_RE.search(text)
    if not m:
        return None
    return " ".join(re.split(r"[\s_-]+", m.group(1).lower()))


def is_shortcut(keys: str | None) -> bool:
    """True for a save or send shortcut of ``SHORTCUTS`` ("Ctrl+S", "cmd+shift+d", "Control+s")."""
    if not keys:
        return False
    parts = frozenset(_MODIFIERS.get(k, k) for k in (p.strip().lower() for p in keys.split("+")) if k)
    return parts in SHORTCUTS


def classify(action_type: str, keys: str | None, reasoning: str | None, text: str | None = None,
             extra: dict[str, object] | None = None) -> HighRisk:
    """Is this action high-risk, and by which rule of the table."""
    t = action_type.upper()
    if t == "KEY_PRESS":
        if is_submit_key(keys):
            return HighRisk(True, "submit_key", keys.strip() if keys else None)
        if is_shortcut(keys):
            return HighRisk(True, "shortcut", keys.strip() if keys else None)
        return NOT_HIGH_RISK
    if t == "TYPE":
        if extra and any(extra.get(k) is True for k in TYPED_SUBMIT_KEYS):
            return HighRisk(True, "typed_submit", "Enter")
        if text and text.endswith(("\n", "\r")):
            return HighRisk(True, "typed_submit", "newline")
        return NOT_HIGH_RISK
    if t == "CLICK":
        kw = keyword_in(reasoning)
        if kw:
            return HighRisk(True, "keyword", kw)
    return NOT_HIGH_RISK
