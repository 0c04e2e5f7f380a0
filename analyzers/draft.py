"""A contract drafted from a run the user says succeeded (``trajcheck draft-contract``; pure).

What its final screen shows that its first did not becomes checks the user trims: each new line of text
(``text_present``, from the final DOM snapshot's text, else from what OCR read on the final frame), the URL
when it changed (``url_matches``), the page or window title when it changed (``element_text`` on ``title``
with a DOM snapshot, else ``text_present``). A line already in the first screen's text is left out, and so is
one that says nothing (fewer than :data:`MIN_CHARS` characters, no letter) or is too long to be a label
(over :data:`MAX_CHARS`). At most :data:`MAX_TEXT_CHECKS` text lines, in the order the final screen shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

#: The most text checks proposed (the user trims; a long list is not read).
MAX_TEXT_CHECKS = 12
#: A proposed line has at least this many characters and a letter...
MIN_CHARS = 3
#: ...and at most this many.
MAX_CHARS = 120


@dataclass(frozen=True)
class Screen:
    """What one screen of the run shows: its URL, its title, its lines of text, and the whole text they
    are matched in (the DOM's page text as contracts read it, or the OCR lines joined)."""

    url: str | None = None
    title: str | None = None
    lines: tuple[str, ...] = ()
    text: str = ""
    source: str = "none"  # dom | screen_text | none


@dataclass
class Draft:
    contract: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the user should know (said on stderr)

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "notes": self.notes}


def _norm(s: str) -> str:
    return " ".join(s.split())


def new_lines(first: Screen, final: Screen) -> list[str]:
    """The final screen's lines worth a check that the first screen's text does not hold, in order, at most
    :data:`MAX_TEXT_CHECKS`."""
    before = _norm(first.text).casefold()
    whole = _norm(final.text).casefold()
    out: list[str] = []
    seen: set[str] = set()
    for raw in final.lines:
        line = _norm(raw)
        key = line.casefold()
        if not (MIN_CHARS <= len(line) <= MAX_CHARS) or not any(c.isalpha() for c in line) or key in seen:
            continue
        if key in before or (whole and key not in whole):  # not new, or not in the text a check reads
            continue
        seen.add(key)
        out.append(line)
        if len(out) == MAX_TEXT_CHECKS:
            break
    return out


def escape(text: str) -> str:
    """``text`` as a regular expression that matches it literally, readable: spaces and hyphens left as they
    are (outside a character class they are literal)."""
    return re.escape(text).replace("\\ ", " ").replace("\\-", "-")


def url_pattern(url: str) -> str:
    """A ``url_matches`` pattern for ``url``: its host and path, escaped (the scheme, the query and the fragment
    left out: they often carry a session or an id)."""
    parts = urlsplit(url)
    return escape(parts.netloc + parts.path) if parts.netloc else escape(url.split("#", 1)[0])


def _short(s: str, n: int = 48) -> str:
    return s if len(s) <= n else s[:n - 3] + "..."


def propose(run_id: str, task_id: str | None, first: Screen, final: Screen) -> Draft:
    """The checks of a contract for the run's task, from what ``final`` shows that ``first`` did not."""
    checks: list[dict[str, Any]] = []
    notes: list[str] = []
    if final.url and final.url != first.url:
        checks.append({"name": f"on {_short(url_pattern(final.url).replace(chr(92), ''))}", "type": "url_matches",
                       "pattern": url_pattern(final.url)})
    title = _norm(final.title or "")
    if title and title != _norm(first.title or ""):
        if final.source == "dom":
            checks.append({"name": f"title {_short(title)}", "type": "element_text", "selector": "title",
                           "pattern": escape(title)})
        else:
            checks.append({"name": f"title {_short(title)}", "type": "text_present", "text": title})
    for line in new_lines(first, final):
        checks.append({"name": f"shows {_short(line)}", "type": "text_present", "text": line})
    names: dict[str, int] = {}
    for c in checks:  # names are unique, so that a rubric can name each check
        n = names[c["name"]] = names.get(c["name"], 0) + 1
        if n > 1:
            c["name"] = f"{c['name']} ({n})"
    if final.source == "none":
        notes.append("no DOM snapshot and no screen text of the final state: only the URL and the title could be "
                     "compared (score with --ocr auto to read the final frame)")
    if not checks:
        notes.append("the final screen shows nothing new that a check could name; write the checks by hand")
    contract = {"format": "trajcheck.contract/1", "name": f"drafted from run {run_id}", "task_id": task_id,
                "checks": checks}
    return Draft(contract, notes)
