"""Lines on the screen that quote the task's goal (a harness window showing the instruction, a form that echoes
it): the task's own words are not evidence that it was done (issue 48), so screen checks and drafted contracts
leave them out (:func:`trajcheck.analyzers.screencheck.without_goal`, :mod:`trajcheck.analyzers.draft`). Pure."""

from __future__ import annotations

import functools
import re

from ..base.box import Box


#: Lines that quote the goal, together, are the goal shown on the screen (a harness window showing the
#: instruction) when they hold at least this many of its words in order (all of them for a shorter goal).
QUOTE_WORDS = 5
#: A line quotes the goal when a run of the goal's words, in order, makes at least this share of its words (a
#: label or a field before the quote, "Task:", is allowed), and at least 2 words.
QUOTE_SHARE = 0.75
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _same_word(a: str, b: str) -> bool:
    """Equal, or (4 letters or more) one letter misread, added or dropped: OCR's "dispIay" for "display"."""
    if a == b:
        return True
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = sorted((a, b), key=len)
    i = next((k for k, (x, y) in enumerate(zip(short, long_)) if x != y), len(short))
    return short[i:] == long_[i + 1:]


def _goal_run(words: list[str], goal: list[str]) -> int:
    """The longest run of ``words`` that is a run of the goal's words, in order, each the same or misread."""
    best, prev = 0, [0] * (len(goal) + 1)
    for w in words:
        cur = [0] * (len(goal) + 1)
        for j, g in enumerate(goal, start=1):
            if _same_word(w, g):
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


@functools.lru_cache(maxsize=1024)
def goal_quotes(lines: tuple[str, ...], goal: str | None) -> frozenset[int]:
    """Which of ``lines`` (in reading order) quote ``goal``: a line quotes it when a run of the goal's words in
    order (:func:`_goal_run`) is at least :data:`QUOTE_SHARE` of its words and 2 words or more; consecutive
    quoting lines are the goal on the screen when together they hold :data:`QUOTE_WORDS` of its words or more
    (the whole goal, when it is shorter). A product name or a message that shares a few words with the task
    ("Display name changed to Jane Doe" for "Change the display name to Jane Doe") is no quote."""
    want = _words(goal or "")
    if len(want) < 3:
        return frozenset()
    need = min(QUOTE_WORDS, len(want))
    runs = []
    for text in lines:
        words = _words(text)
        r = _goal_run(words, want) if words else 0
        runs.append(r if r >= 2 and r >= QUOTE_SHARE * len(words) else 0)
    out: set[int] = set()
    i = 0
    while i < len(runs):
        j = i
        while j < len(runs) and runs[j]:
            j += 1
        if sum(runs[i:j]) >= need:
            out.update(range(i, j))
        i = max(j, i + 1)
    quoted = {" ".join(_words(lines[k])) for k in out}  # a quoting line read again (a fallback pass) is one too
    return frozenset(out | {k for k, r in enumerate(runs) if r and " ".join(_words(lines[k])) in quoted})


def within(b: Box, boxes: list[Box]) -> bool:
    cx, cy = (b.left + b.right) / 2, (b.top + b.bottom) / 2
    return any(o.left <= cx <= o.right and o.top <= cy <= o.bottom for o in boxes)
