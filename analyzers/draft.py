"""A contract drafted from a run the user says succeeded (``trajcheck draft-contract``; pure).

What its final screen shows that its first did not becomes checks the user trims: each new line of text
(``text_present``, from the final DOM snapshot's text, else from what OCR read on the final frame), the URL
when it changed (``url_matches``), the page or window title when it changed (``element_text`` on ``title``
with a DOM snapshot, else ``text_present``), the new text of the title band where OCR read the final frame of
a run without URLs (``"area": "title"``: a desktop's window title), and the run's final answer when it gave
one (``answer_matches``). A line already in the first screen's text is left out, and so is one that says
nothing (fewer than :data:`MIN_CHARS` characters, or no letter and no digit: a result "579" is kept), one too
long to be a label (over :data:`MAX_CHARS`), a clock or a date (:func:`without_clock`: "Tue Jul 1 7:48AM"
changes every run; taken off a line's start or end), a line that quotes the goal
(:func:`trajcheck.analyzers.screencheck.goal_quotes`: the instruction on the screen is no evidence), and, where
OCR read the frame, a line read below the confidence threshold (noise) and the title band's lines (menu-bar
items; the band gets its own check). At most :data:`MAX_TEXT_CHECKS` text lines, in the order the final
screen shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .screencheck import goal_quotes
from .screentext import MIN_LINE_CONFIDENCE, TextLine

#: The most text checks proposed (the user trims; a long list is not read).
MAX_TEXT_CHECKS = 12
#: A proposed line has at least this many characters and a letter or a digit...
MIN_CHARS = 3
#: ...and at most this many.
MAX_CHARS = 120


@dataclass(frozen=True)
class DraftScreen:
    """What one screen of the run shows: its URL, its title, its lines of text, and the whole text they
    are matched in (the DOM's page text as contracts read it, or the OCR lines joined)."""

    url: str | None = None
    title: str | None = None
    lines: tuple[str, ...] = ()
    text: str = ""
    source: str = "none"  # dom | screen_text | none
    #: What OCR read on the frame, each line with its confidence and box (empty: only ``lines`` are known), and
    #: the height of its title band in frame pixels (:data:`trajcheck.analyzers.screencheck.TITLE_BAND`).
    read: tuple[TextLine, ...] = ()
    band: int = 0

    def body(self) -> tuple[str, ...]:
        """The lines a text check is proposed from: where OCR read the frame, those read with confidence below
        the title band; else every line."""
        if not self.read:
            return self.lines
        return tuple(x.text for x in self.read if x.confidence >= MIN_LINE_CONFIDENCE and x.box.top >= self.band)

    def title_band(self) -> tuple[str, ...]:
        """The lines OCR read with confidence in the title band (a window title, menu-bar items, a clock)."""
        return tuple(x.text for x in self.read if x.confidence >= MIN_LINE_CONFIDENCE and x.box.top < self.band)


@dataclass
class ContractDraft:
    contract: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the user should know (said on stderr)

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "notes": self.notes}


def _norm(s: str) -> str:
    return " ".join(s.split())


_DAY = r"(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?\.?,?"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?,?"
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:[ap]\.?m\.?)?,?"
_DATE = r"(?:\d{1,4}[/-]\d{1,2}[/-]\d{1,4}|\d{1,2}\.\d{1,2}\.\d{4}),?"
#: A word of a clock or a date, and what stands beside one in a status bar (a day's number, AM/PM, "today").
_WHEN = re.compile(rf"(?:{_DAY}|{_MONTH}|{_TIME}|{_DATE})", re.I)
_BESIDE = re.compile(r"(?:\d{1,4}(?:st|nd|rd|th)?,?|[ap]\.?m\.?|today|yesterday|at|[-|·•])", re.I)


def without_clock(line: str) -> str:
    """``line`` without the clock or date at its start or end ("Quillpad File Edit Tue Jul 1 7:48AM" ->
    "Quillpad File Edit"): they change every run. A number alone is no date (a calculator's "579" stays), nor
    is a date inside a sentence taken out ("Meeting booked for Jul 1 at noon")."""
    words = line.split()
    when = [bool(_WHEN.fullmatch(w)) for w in words]
    if not any(when):
        return line
    part = [w or bool(_BESIDE.fullmatch(x)) for x, w in zip(words, when)]
    i = 0
    while i < len(words) and part[i]:
        i += 1
    j = len(words)
    while j > i and part[j - 1]:
        j -= 1
    # a run at the start or the end that holds a clock or date word and a digit ("May I help you?" keeps its May)
    head = any(when[:i]) and any(c.isdigit() for w in words[:i] for c in w)
    tail = any(when[j:]) and any(c.isdigit() for w in words[j:] for c in w)
    return " ".join(words[i if head else 0:j if tail else len(words)]) if head or tail else line


def clock_or_date(line: str) -> bool:
    """Is ``line`` only a clock or a date ("Tue Jul 1 7:48AM", "12/07/2026", "7:48 PM")?"""
    return bool(line.strip()) and not without_clock(line)


def new_lines(first: DraftScreen, final: DraftScreen, goal: str | None = None) -> list[str]:
    """The final screen's lines worth a check that the first screen's text does not hold, in order, at most
    :data:`MAX_TEXT_CHECKS`: not the title band's, the goal's words, a clock or a date, or noise."""
    before = _norm(first.text).casefold()
    whole = _norm(final.text).casefold()
    body = final.body()
    quotes = goal_quotes(body, goal)
    out: list[str] = []
    seen: set[str] = set()
    for k, raw in enumerate(body):
        line = _norm(without_clock(raw))
        key = line.casefold()
        if not (MIN_CHARS <= len(line) <= MAX_CHARS) or not any(c.isalnum() for c in line) or key in seen \
                or k in quotes:
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


def title_line(first: DraftScreen, final: DraftScreen, goal: str | None = None) -> str | None:
    """The longest new line of the final frame's title band (a window's title), where OCR read it: not on the
    first screen's title band, not a clock, a date or the goal; None without one."""
    band = final.title_band()
    before = {_norm(without_clock(x)).casefold() for x in first.title_band()}
    quotes = goal_quotes(band, goal)
    got = [line for k, x in enumerate(band) if MIN_CHARS <= len(line := _norm(without_clock(x))) <= MAX_CHARS
           and any(c.isalpha() for c in line) and line.casefold() not in before and k not in quotes]
    return max(got, key=len) if got else None


def propose(run_id: str, task_id: str | None, first: DraftScreen, final: DraftScreen, goal: str | None = None,
            answer: str | None = None) -> ContractDraft:
    """The checks of a contract for the run's task, from what ``final`` shows that ``first`` did not, and the
    run's final ``answer``; lines that quote ``goal`` are left out."""
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
    band = title_line(first, final, goal) if final.source == "screen_text" else None
    if band is not None:
        checks.append({"name": f"title band {_short(band)}", "type": "text_present", "text": band, "area": "title"})
    for line in new_lines(first, final, goal):
        checks.append({"name": f"shows {_short(line)}", "type": "text_present", "text": line})
    said = _norm(answer or "")
    if said and len(said) <= MAX_CHARS:
        checks.append({"name": f"answer {_short(said)}", "type": "answer_matches", "value": said})
    elif said:
        notes.append(f"the run's final answer is over {MAX_CHARS} characters: no answer_matches check proposed "
                     "(write a pattern for what it must say)")
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
    return ContractDraft(contract, notes)
