"""Contract checks on what the screen shows (issue 39, part 3), pure: ``text_present``, ``text_absent``,
``text_matches`` and ``element_text`` evaluated on the lines OCR read of a frame where no DOM snapshot says what
the page holds, and ``answer_matches`` on the agent's final answer.

A screen check reads an *area* of a *frame*. The area is the whole frame (the default), a ``region``
``[x, y, width, height]`` in frame pixels, or ``"area": "title"``, the top :data:`TITLE_BAND` CSS pixels where
a desktop's menu bar and window titles are. The frame is ``"frame": "final"`` (the default: the judged state),
an integer ``k`` (the frame after step ``k``; 0: before the first step), or ``"any"`` (any frame of the run).

A text is found in a line case aside, the glyphs OCR reads for one another (:data:`CONFUSED`: a capital I read
as ``|``, an angle quote as ``<``) taken as one. The evidence of a decided check is the frame, the line's box and
its OCR confidence. A line read with less
confidence than :data:`~trajcheck.analyzers.screentext.MIN_LINE_CONFIDENCE` decides nothing: a text found only
in such lines, or a line that reads like the text without being it (:data:`NEAR`, a misread), leaves the check
undecided, never failed; so does an area where nothing legible was read. ``element_text`` without a DOM cannot
check its selector: its pattern found on the screen passes it at :data:`SCREEN_FALLBACK_WEIGHT`; not found,
it is undecided (the element may be scrolled out of view).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ..base.box import Box
from . import patterns
from .goalquotes import goal_quotes as goal_quotes, within  # re-exported: drafts and tests ask the checks
from .screentext import MIN_LINE_CONFIDENCE, TextLine

#: The top band of a frame where window titles and a desktop's menu bar are, in CSS pixels (macOS: a 24 px menu
#: bar and a 28 px title bar; Windows and GNOME title bars are 30-40 px).
TITLE_BAND = 64
#: How much a check decided from the screen in place of its DOM selector weighs (``element_text``): the
#: pattern is on the screen, but not necessarily in the element the selector names.
SCREEN_FALLBACK_WEIGHT = 0.5
#: A line this similar (difflib ratio over a window of the text's length) to the text looked for, without
#: holding it, may be a misread of it: the check is undecided rather than failed or passed.
NEAR = 0.8
#: The most characters changed, added or dropped in a near match of a ``text_matches`` pattern (a misread).
NEAR_EDITS = 3
#: How long a near match of a pattern is looked for (seconds): the pattern is the user's; past this the check is
#: undecided.
NEAR_TIMEOUT = 0.5
#: The checks that may be decided from the screen.
SCREEN_CHECKS = ("text_present", "text_absent", "text_matches", "element_text")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class ScreenView:
    """What OCR read of one frame's area: the frame (``final``, ``after step k``), its file, the area."""

    frame: str
    file: str | None
    box: Box
    lines: tuple[TextLine, ...]


@dataclass(frozen=True)
class ScreenEvidence:
    """The screen a check reads: its views, and why some frame it names was not read (None: all were); for a check
    on the final frame, why that frame may not show the final state (``stale``: actions came after it); for a
    check on any frame, the TYPE actions no screenshot after them shows (``typed``: step index, text); the run's
    goal, whose quotes on the screen are not evidence (:func:`goal_quotes`)."""

    views: tuple[ScreenView, ...] = ()
    missing: str | None = None
    stale: str | None = None
    typed: tuple[tuple[int, str], ...] = ()
    goal: str | None = None
    #: Texts typed over consecutive TYPE steps into one field (first step, last step, the text joined:
    #: :func:`trajcheck.analyzers.unseen.typed_together`), for a check on any frame.
    typed_together: tuple[tuple[int, int, str], ...] = ()


def frame_of(chk: Mapping[str, Any]) -> str | int:
    """The frame a check names: ``final``, ``any`` or a step index (the frame after that step)."""
    f = chk.get("frame", "final")
    return f if isinstance(f, int) and not isinstance(f, bool) else str(f)


def reads_screen(chk: Mapping[str, Any], has_dom: bool) -> bool:
    """Is ``chk`` decided from the screen? Where the judged state has a DOM snapshot, only a check about an area
    of pixels (a region, the title band) or about another frame than the final one is."""
    if chk.get("type") not in SCREEN_CHECKS:
        return False
    pixels = "region" in chk or chk.get("area", "frame") != "frame" or frame_of(chk) != "final"
    return pixels or not has_dom


def area(chk: Mapping[str, Any], width: int, height: int, scale: float) -> Box | None:
    """The box a check reads in a ``width`` x ``height`` frame (``scale``: its pixels per CSS pixel); None when
    its region lies outside the frame."""
    if "region" in chk:
        x, y, w, h = chk["region"]
        if w <= 0 or h <= 0 or x + w > width or y + h > height:
            return None
        return Box.from_xywh(x, y, w, h)
    if chk.get("area") == "title":
        return Box(0, 0, width, min(height, round(TITLE_BAND * scale)))
    return Box(0, 0, width, height)


def norm(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def _flat(text: str) -> str:
    return _WS.sub(" ", text).strip()


#: The glyphs OCR reads for one another, by the character a text looked for holds (:func:`pattern`): a capital
#: I and a small l are one stroke in most sans-serif fonts, and Tesseract reads them as ``|``, ``!`` or ``1``
#: ("| agree to the terms"); angle quotes as ``<``/``>``; curly quotes and dashes as their plain forms. A small
#: i (dotted) and digits are not folded: "mail" never passes as "mall", nor "10" as "1O".
CONFUSED = {"I": "iIl|!1", "l": "lLI|!1", "|": "|Il!1", **dict.fromkeys("<‹«", "<‹«"), **dict.fromkeys(">›»", ">›»"),
            **dict.fromkeys("'‘’`", "'‘’`"), **dict.fromkeys('"“”', '"“”'), **dict.fromkeys("-‐–—", "-‐–—")}


def pattern(text: str) -> re.Pattern[str]:
    """What a line must hold to hold ``text``: its characters in order, case aside, spacing collapsed (a space
    beside a sign may be missing), each glyph OCR confuses (:data:`CONFUSED`) matched by any of those it is read
    as."""
    flat = _flat(text)
    out = []
    for i, ch in enumerate(flat):
        if ch == " " and not (flat[i - 1].isalnum() and flat[i + 1].isalnum()):
            out.append(" ?")  # beside a sign, a space OCR may drop ("‹ Back" read "<Back")
        elif ch in CONFUSED:
            out.append("[" + re.escape(CONFUSED[ch]) + "]")
        elif ch.lower() != ch.upper() and len(ch.lower()) == len(ch.upper()) == 1:  # not ß (upper: SS)
            out.append("[" + re.escape(ch.lower() + ch.upper()) + "]")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out))


def _near(needle: str, line: str) -> bool:
    """Does ``line`` hold a stretch that reads almost like ``needle`` (a misread of it)?"""
    n, h = len(needle), len(line)
    if n == 0 or h == 0:
        return False
    if h <= n:
        return SequenceMatcher(None, needle, line).ratio() >= NEAR
    return any(SequenceMatcher(None, needle, line[i:i + n]).ratio() >= NEAR for i in range(0, h - n + 1))


def _near_match(pat: str, views: tuple[ScreenView, ...]) -> bool | None:
    """Does the text read hold a stretch that matches ``pat`` but for a misread? The closest match
    (``regex``'s fuzzy matching) in the lines read with confidence may have up to :data:`NEAR_EDITS` characters
    changed, added or dropped, at most one in five of its characters ("Order TH-2O931 confirmed" for
    ``Order [A-Z]{2}-\\d+ confirmed``); in the lines read below the confidence threshold, twice as many. None
    when that cannot be told within :data:`NEAR_TIMEOUT` seconds."""
    sure = "\n".join(_flat(x.text) for v in views for x in v.lines if x.confidence >= MIN_LINE_CONFIDENCE)
    shaky = "\n".join(_flat(x.text) for v in views for x in v.lines if x.confidence < MIN_LINE_CONFIDENCE)
    for text, edits, share in ((sure, NEAR_EDITS, 5), (shaky, 2 * NEAR_EDITS, 2.5)):
        got = patterns.near(pat, text, edits, share, NEAR_TIMEOUT) if text else False
        if got is not False:
            return got
    return False


def without_goal(views: tuple[ScreenView, ...], goal: str | None) -> tuple[tuple[ScreenView, ...], int]:
    """``views`` without the lines that quote the goal (:func:`goal_quotes`) and the words read within them (a
    fallback pass reads a window's words alone), and how many were left out: the task's own words on the screen
    are not evidence that it was done."""
    if not goal:
        return views, 0
    out, left = [], 0
    for v in views:
        drop = set(goal_quotes(tuple(x.text for x in v.lines), goal))
        boxes = [v.lines[k].box for k in drop]
        drop |= {k for k, x in enumerate(v.lines) if k not in drop and boxes and within(x.box, boxes)}
        left += len(drop)
        out.append(v if not drop else ScreenView(v.frame, v.file, v.box,
                                                 tuple(x for i, x in enumerate(v.lines) if i not in drop)))
    return tuple(out), left


def _where(view: ScreenView, lines: list[TextLine]) -> dict[str, Any]:
    b = lines[0].box if lines else view.box
    return {"frame": view.frame, "file": view.file, "box": [b.left, b.top, b.width, b.height],
            "confidence": min(x.confidence for x in lines) if lines else None}


def _find(views: tuple[ScreenView, ...], hit: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Where ``hit`` (text -> bool) holds on confident lines, and where only with low-confidence lines in."""
    low = None
    for v in views:
        sure = [x for x in v.lines if x.confidence >= MIN_LINE_CONFIDENCE]
        for x in sure:
            if hit(_flat(x.text)):
                return _where(v, [x]), None
        if sure and hit(_flat(" ".join(x.text for x in sure))):  # across a wrapped line
            return _where(v, sure), None
        if low is None:
            shaky = [x for x in v.lines if hit(_flat(x.text))] or \
                    (list(v.lines) if v.lines and hit(_flat(" ".join(x.text for x in v.lines))) else [])
            if shaky:
                low = _where(v, list(shaky))
    return None, low


def _read(views: tuple[ScreenView, ...]) -> dict[str, Any]:
    """The evidence of a check that found nothing: what was read, where, how confidently."""
    lines = [x for v in views for x in v.lines]
    return {"frames": [v.frame for v in views][:8], "boxes": [[v.box.left, v.box.top, v.box.width, v.box.height]
                                                             for v in views][:8],
            "lines_read": len(lines), "min_confidence": min((x.confidence for x in lines), default=None)}


def _typed(kind: str, chk: Mapping[str, Any], ev: ScreenEvidence) -> dict[str, Any] | None:
    """The evidence of a TYPE action, or of consecutive TYPEs into one field, that typed what a ``text_present`` or
    ``text_matches`` check on any frame looks for (case and spacing aside), when no screenshot after it shows the
    field; None without one."""
    if kind not in ("text_present", "text_matches") or frame_of(chk) != "any":
        return None

    def holds(text: str) -> bool:
        return patterns.search(chk["pattern"], _flat(text)) is not None if kind == "text_matches" \
            else norm(chk["text"]) in norm(text)

    for step, text in ev.typed:
        if holds(text):
            return {"source": "typed", "step": step,
                    "evidence_of": f"the harness typed it at step {step} without an error; no screenshot after that "
                                   "step shows whether it reached a field"}
    for first, last, text in ev.typed_together:
        if holds(text):  # undecided, not passed: a harness that fills a field replaces what the TYPE before wrote
            return {"source": "typed", "step": first, "last_step": last,
                    "undecided": f"missing evidence: typed only over steps {first} to {last}, one TYPE after "
                                 f"another; whether each added to the field or replaced it is not in the log, and "
                                 f"no screenshot after step {last} shows the field"}
    return None


def _by_typing(base: dict[str, Any], typed: dict[str, Any]) -> tuple[bool | None, dict[str, Any]]:
    """A check decided by the run's own typing: passed by one TYPE, undecided by several joined."""
    return (None if "undecided" in typed else True), base | typed


def _hit(kind: str, chk: Mapping[str, Any]) -> Any:
    """What a line must hold for the check (text -> bool): its pattern, or its text (:func:`pattern`)."""
    if kind in ("text_matches", "element_text"):
        def hit(t: str) -> bool:
            return patterns.search(chk["pattern"], t) is not None
        return hit
    rx = pattern(chk["text"])
    return lambda t: rx.search(t) is not None


def found(kind: str, chk: Mapping[str, Any], lines: tuple[TextLine, ...], goal: str | None = None,
          new_from: int = 0) -> bool:
    """Do ``lines`` (one area's read) decide the check whatever else is read: a line read with confidence holds
    its text (passed; failed for ``text_absent``), the lines that quote the goal left out, as :func:`evaluate`
    leaves them? What a read stage adds is matched alone: the lines before ``new_from`` were matched at an
    earlier stage; the confident lines together (a wrapped sentence) always. The misread tests of
    :func:`evaluate` (:func:`_near`, a fuzzy match) are not run: they never decide a check."""
    (view,), _ = without_goal((ScreenView("", None, Box(0, 0, 0, 0), lines),), goal)
    new = {id(x) for x in lines[new_from:]}
    sure = [x for x in view.lines if x.confidence >= MIN_LINE_CONFIDENCE]
    try:
        hit = _hit(kind, chk)
        return any(id(x) in new and hit(_flat(x.text)) for x in sure) or \
            (len(sure) > 1 and hit(_flat(" ".join(x.text for x in sure))))
    except (patterns.PatternError, patterns.PatternTimeout):
        return False  # the contract's evaluation says so, with the check


#: A line read below the confidence threshold is read again (:mod:`trajcheck.media.contractread`) when a stretch
#: of it is this similar to the text looked for: looser than :data:`NEAR`, a re-read costs less than a misread.
MAYBE = 0.6


def could_hold(kind: str, chk: Mapping[str, Any], text: str) -> bool:
    """Could a line read below the confidence threshold hold what the check looks for, once read again? For a
    text, a line that holds it or whose stretch of the text's length reads like it (:data:`MAYBE`); for a
    pattern, a line that could hold the plain stretch every match holds (:func:`patterns.required_literal`,
    ``rightness`` of ``[Bb]rightness``) as it could a text, and any line when the pattern has none (a misread
    breaks a regex anywhere)."""
    if kind in ("text_matches", "element_text"):
        literal = patterns.required_literal(str(chk["pattern"]))
        return literal is None or could_hold("text_present", {"text": literal}, text)
    if pattern(chk["text"]).search(_flat(text)) is not None:
        return True
    needle, line = norm(chk["text"]), norm(text)
    n = len(needle)
    if n == 0 or not line:
        return False
    for i in range(0, max(1, len(line) - n + 1)):
        m = SequenceMatcher(None, needle, line[i:i + n])
        if m.real_quick_ratio() >= MAYBE and m.quick_ratio() >= MAYBE and m.ratio() >= MAYBE:
            return True
    return False


def evaluate(kind: str, chk: Mapping[str, Any], ev: ScreenEvidence) -> tuple[bool | None, dict[str, Any]]:
    """The result of a screen check (``passed`` None: undecided, ``evidence["undecided"]`` says why). On a final
    frame that actions came after (``ev.stale``), what it shows decides nothing about the final state."""
    passed, evidence = _evaluate(kind, chk, ev)
    if ev.stale is not None and passed is not None:
        return None, evidence | {"undecided": f"missing evidence: {ev.stale}"}
    return passed, evidence


def _evaluate(kind: str, chk: Mapping[str, Any], ev: ScreenEvidence) -> tuple[bool | None, dict[str, Any]]:
    base: dict[str, Any] = {"source": "screen_text"}
    if kind == "element_text":
        base |= {"selector": chk["selector"], "pattern": chk["pattern"], "weight": SCREEN_FALLBACK_WEIGHT}
    elif kind == "text_matches":
        base["pattern"] = chk["pattern"]
    else:
        base["text"] = chk["text"]
    views, quoted = without_goal(ev.views, ev.goal)
    if quoted:
        base["note"] = f"{quoted} line{'s' * (quoted != 1)} that quote{'s' * (quoted == 1)} the goal left out"
    typed = _typed(kind, chk, ev)
    if not views:
        return _by_typing(base, typed) if typed else \
            (None, base | {"undecided": f"missing evidence: {ev.missing or 'no screen text'}"})
    if not any(v.lines for v in views) and kind != "element_text":
        return _by_typing(base, typed) if typed else \
            (None, base | {"undecided": "missing evidence: no legible text on screen"} | _read(views))
    hit = _hit(kind, chk)
    needle = "" if kind in ("text_matches", "element_text") else norm(chk["text"])
    sure, low = _find(views, hit)
    if sure is not None:
        return kind != "text_absent", base | sure
    if typed and "undecided" not in typed:
        return True, base | typed
    if quoted and any(_find(ev.views, hit)):  # the text is there, but only where the goal is quoted: a label that
        # echoes the task ("Workspace name" under "Create a workspace") and the task's own words look alike
        return None, base | _read(views) | {
            "undecided": "missing evidence: the text is on the screen only in lines that quote the goal"}
    if low is not None:
        return None, base | low | {"undecided": "missing evidence: read below the OCR confidence threshold"}
    if kind == "element_text":
        return None, base | _read(views) | {
            "undecided": "missing evidence: no DOM snapshot to check the selector, and the pattern is not on screen"}
    if kind != "text_matches" and any(_near(needle, norm(x.text)) for v in views for x in v.lines):
        return None, base | _read(views) | {"undecided": "missing evidence: a line reads almost like the text"}
    if kind == "text_matches" and _near_match(chk["pattern"], views) is not False:
        return None, base | _read(views) | {"undecided": "missing evidence: a line reads almost like a match"}
    if ev.missing:  # not every frame named was read: absence is not shown
        return None, base | _read(views) | {"undecided": f"missing evidence: {ev.missing}"}
    return kind == "text_absent", base | _read(views)


def answer_check(chk: Mapping[str, Any], answer: str | None) -> tuple[bool | None, dict[str, Any]]:
    """``answer_matches``: the agent's final answer against a ``pattern`` (regex) or a ``value`` (equal, case,
    spacing and a number's formatting aside)."""
    base: dict[str, Any] = {k: chk[k] for k in ("pattern", "value") if k in chk}
    if answer is None:
        return None, base | {"undecided": "missing evidence: no final answer recorded"}
    base["answer"] = answer[:200]
    if "pattern" in chk:
        return patterns.search(chk["pattern"], answer) is not None, base
    return _same_value(str(chk["value"]), answer), base


def _same_value(want: str, got: str) -> bool:
    a, b = norm(want).strip(" .\"'"), norm(got).strip(" .\"'")
    if a == b:
        return True
    try:
        return float(a.replace(",", "")) == float(b.replace(",", ""))
    except ValueError:
        return False
