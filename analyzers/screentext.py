"""Messages read from the screen where no DOM snapshot says them (issue 31).

Pure: text lines that OCR read in a region of a step's frames in, the same :class:`PageMessages` the DOM
path gives out, so the evidence referee reads both alike (:mod:`trajcheck.analyzers.evidence`).

Which lines are messages follows the DOM path's two ways (:mod:`trajcheck.analyzers.messages`):

* a **small change** (the region that changed is at most :data:`SCREEN_SHARE` of the frame: a toast, an
  alert, a validation line appearing) is where a page speaks to its user, as a message element does: each
  new line, and the new lines read as one text, are classified by the message-element words
  (``ERROR_TEXT`` / ``SUCCESS_TEXT``). A plain instruction ("Please enter your email") is not an error here:
  screen text has no class to say it is one (:data:`INSTRUCTION`);
* a **new screen** (a larger change: a page loaded) is read as page text: only whole sentences that say an
  error or a success (``ERROR_SENTENCE`` / ``SUCCESS_SENTENCE``) count, so that a table header "Order Placed"
  or a form's "Please enter your password" is not a message.

A line is *new* when pixels under it changed with the action (the pixel diff's changed cells): a message
already on screen, drawn the same before and after, is not the action's response, as on the DOM path. Only new
lines are classified, so the frame before the action is never read. A line read with less confidence than
:data:`MIN_LINE_CONFIDENCE` is kept in the ledger and decides nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..base.box import Box

from .messages import ERROR_TEXT, NO_MESSAGES, SUCCESS_TEXT, TEXT_CHARS, PageMessages, page_messages

#: A change covering more than this share of the frame is a new screen, read as page text.
SCREEN_SHARE = 0.25
#: Tesseract's line confidence (0-1) below which a line decides nothing. Set from the measurement in
#: docs/referee.md ("Screen text"): on the sample runs' frames, lines read at >= 0.80 matched their DOM text.
MIN_LINE_CONFIDENCE = 0.80
#: What a message rule's weight is multiplied by when its message was read from the screen rather than a DOM
#: snapshot: one minus the upper bound (Wilson, 95%) of the rate at which screen text and the DOM disagree on
#: the kind of new message a high-risk step brought up, measured on the sample runs (docs/referee.md, "Screen
#: text"; ``trajcheck score sample_runs --ocr always``, then ``screen_text_agrees``).
SCREEN_TEXT_TRUST = 0.77
#: An instruction, not an error, unless it asks for something "valid" or "correct" within a few words.
INSTRUCTION = re.compile(r"\bplease (?:enter|provide|fill|select|choose|complete)\b(?![^.]{0,24}\b(?:valid|correct)\b)",
                         re.I)
#: Characters OCR reads for bullets and icons at a line's start ("« Password is too short").
_LEAD = re.compile(r"^[^0-9A-Za-z]+")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class TextLine:
    """One line of text OCR read: its words, Tesseract's confidence (0-1), its box in frame pixels."""

    text: str
    confidence: float
    box: Box


@dataclass(frozen=True)
class ScreenRead:
    """What OCR read in one region of a step's post frame: its lines, and which of them are new (pixels under
    them changed with the action). ``whole``: the region is a new screen (page-text rules)."""

    box: Box
    after: tuple[TextLine, ...]
    new: tuple[bool, ...] = ()  # per line of ``after``; empty: every line is new
    whole: bool = False

    def new_lines(self) -> tuple[TextLine, ...]:
        """The lines that appeared or changed with the action."""
        return self.after if not self.new else tuple(x for x, n in zip(self.after, self.new) if n)


def norm(text: str) -> str:
    """A line as messages are compared: bullets off, whitespace collapsed, lower case, at most TEXT_CHARS."""
    return _WS.sub(" ", _LEAD.sub("", text)).strip().lower()[:TEXT_CHARS]


def is_new_screen(box: Box, width: int, height: int) -> bool:
    """Is a change of ``box`` in a ``width`` x ``height`` frame a new screen rather than a message?"""
    return box.width * box.height > SCREEN_SHARE * width * height


def _line_kind(text: str) -> str | None:
    if ERROR_TEXT.search(INSTRUCTION.sub(" ", text)):
        return "error"
    if SUCCESS_TEXT.search(text):
        return "success"
    return None


def classify(lines: tuple[TextLine, ...], whole: bool) -> tuple[PageMessages, tuple[tuple[str, str, float], ...]]:
    """The messages ``lines`` (read in one region) say, and every message found as (kind, text, confidence):
    those below :data:`MIN_LINE_CONFIDENCE` are listed, and left out of the PageMessages (they decide nothing)."""
    pm = page_messages(None, " ".join(norm(x.text) for x in lines))  # whole sentences, as page text
    kinds = [(t, "error") for t in sorted(pm.errors)] + [(t, "success") for t in sorted(pm.successes)]
    if not whole:  # a small change: each line as a message element's text
        kinds += [(t, k) for x in lines if (k := _line_kind(t := norm(x.text)))]
    found: dict[str, tuple[str, float]] = {}
    for t, k in kinds:
        found.setdefault(t, (k, _confidence_of(t, lines)))
    sure = {t: k for t, (k, c) in found.items() if c >= MIN_LINE_CONFIDENCE}
    errors = frozenset(t for t, k in sure.items() if k == "error")
    successes = frozenset(t for t, k in sure.items() if k == "success")
    worded = frozenset(t for t in errors if ERROR_TEXT.search(t))
    return (PageMessages(errors, successes, worded, source="screen_text"),
            tuple((k, t, c) for t, (k, c) in found.items()))


def _confidence_of(text: str, lines: tuple[TextLine, ...]) -> float:
    """The confidence of a message: the least of the lines whose words it holds (a sentence may span two). A line
    of one or two characters (an icon read as "i" or "o") is no part of a message's words."""
    parts = [x.confidence for x in lines if len(norm(x.text)) >= 3 and norm(x.text) in text] or \
            [x.confidence for x in lines if text in norm(x.text)]
    return round(min(parts), 3) if parts else round(min(x.confidence for x in lines), 3)


def merge(parts: list[PageMessages]) -> PageMessages:
    return PageMessages(frozenset().union(*(p.errors for p in parts)), frozenset().union(*(p.successes for p in parts)),
                        frozenset().union(*(p.worded_errors for p in parts)), source="screen_text")


def _kinds_new(before: PageMessages, after: PageMessages) -> set[str]:
    """The kinds of message that appeared: errors (invalid-field marks have no words to read) and successes."""
    errors = {e for e in after.errors - before.errors if not e.startswith("invalid field:")}
    return ({"error"} if errors else set()) | ({"success"} if after.successes - before.successes else set())


@dataclass(frozen=True)
class ScreenFinding:
    """What the screen said in the regions read for one step (or for a run's final frame)."""

    lines: tuple[str, ...]  # every line read on the frame after, region by region, in reading order
    boxes: tuple[Box, ...]  # each line's box, frame pixels
    new: tuple[str, ...]  # the lines that were not on the frame before
    messages: tuple[str, ...]  # "kind: text (confidence)", those that decide nothing marked so
    after: PageMessages  # the messages of the new lines, confident ones only
    regions: tuple[Box, ...]  # the regions read
    agrees: bool | None = None  # where a DOM snapshot was read too: do both find the same kinds of new message

    @property
    def new_kinds(self) -> set[str]:
        return _kinds_new(NO_MESSAGES, self.after)


def finding(reads: list[ScreenRead], dom_before: PageMessages | None = None,
            dom_after: PageMessages | None = None) -> ScreenFinding | None:
    """The finding of the regions read for one step; None when none was read. With the step's DOM messages
    (both snapshots), whether the two sources find the same kinds of new message."""
    if not reads:
        return None
    afters, said = [], []
    for r in reads:
        after, found = classify(r.new_lines(), r.whole)
        afters.append(after)
        for kind, text, conf in found:
            low = "" if conf >= MIN_LINE_CONFIDENCE else ", low confidence: decides nothing"
            said.append(f"{kind}: {text} ({conf:.2f}{low})")
    after = merge(afters)
    agrees = None
    if dom_before is not None and dom_after is not None:
        agrees = _kinds_new(dom_before, dom_after) == _kinds_new(NO_MESSAGES, after)
    lines = tuple(x for r in reads for x in r.after)
    return ScreenFinding(tuple(x.text for x in lines), tuple(x.box for x in lines),
                         tuple(x.text for r in reads for x in r.new_lines()), tuple(dict.fromkeys(said)),
                         after, tuple(r.box for r in reads), agrees)
