"""The perceptual verifier's high-risk classifier, as the seed's table defines it.

| action shape                                            | high-risk |
|---------------------------------------------------------|-----------|
| KEY_PRESS with keys Return / Enter, or a chord ending in one (ctrl+Return) | yes |
| CLICK whose reasoning contains a high-risk keyword      | yes       |
| CLICK without one                                       | no        |
| everything else (WAIT, DONE, SCROLL, TYPE, DOUBLE_CLICK, NAVIGATE, unknown) | no |

Keyword matching is case-insensitive and word-aware: a keyword must start a word
("resend" and "unsaved" do not match "send" and "save"), may carry a suffix
("submitted", "deletes", "confirmation" match, as a substring test would), and the
space in a multi-word keyword matches any run of spaces, hyphens or underscores
("sign-in", "log  in").
"""

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


@dataclass(frozen=True)
class HighRisk:
    high_risk: bool
    rule: str | None = None  # "submit_key" | "keyword" | None
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


def classify(action_type: str, keys: str | None, reasoning: str | None) -> HighRisk:
    """Is this action high-risk, and by which rule of the table."""
    t = action_type.upper()
    if t == "KEY_PRESS":
        if is_submit_key(keys):
            return HighRisk(True, "submit_key", keys.strip() if keys else None)
        return NOT_HIGH_RISK
    if t == "CLICK":
        kw = keyword_in(reasoning)
        if kw:
            return HighRisk(True, "keyword", kw)
    return NOT_HIGH_RISK
