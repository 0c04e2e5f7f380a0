"""Text from a run made safe to show: the one rule the terminal and the HTML report share.

A log's text is data. What a terminal would act on rather than show (C0 and C1 controls, ESC starting every
escape sequence, DEL) and what reorders what is shown (the bidirectional marks, embeddings, overrides and
isolates, which make "evil" display as "live") is written as its escape (``\\x1b``, ``\\u202e``), so the
reader sees that it is there and what it is. Line breaks and tabs stay.
"""

from __future__ import annotations

import re
from typing import Any

#: The characters :func:`clean` makes visible: C0 controls but tab and line feed, DEL and C1, the Arabic letter
#: mark, the left-to-right and right-to-left marks, the embeddings and overrides (U+202A-U+202E) and the
#: isolates (U+2066-U+2069).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(m: "re.Match[str]") -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean(text: Any) -> str:
    """``text`` (from a run, a log, a ledger) safe to show: every control character, escape sequence start and
    bidirectional mark or override shown as its escape (``\\x1b``, ``\\u202e``), so a log cannot clear the
    screen, colour it, hide a link or reorder what is shown. Line breaks and tabs stay. Not escaped for any
    markup: the terminal's and the report's renderers do that after."""
    return UNSAFE.sub(_visible, str(text))
