"""A contract's regular expressions matched in bounded time.

A ``url_matches``, ``element_text``, ``text_matches`` or ``answer_matches`` pattern is the user's, but the
text it is matched against comes from the run: a page's text, a line read on its screen, the agent's answer.
Python's ``re`` has no time limit, and a pattern with overlapping repeats (``(a|aa)+b``) on a line of sixty ``a``
backtracks for longer than the age of the universe. Patterns are matched with ``regex`` (mrab-regex, the
``re``-compatible engine of its version 0 syntax), each search given :data:`TIMEOUT` seconds; past it the check
cannot be evaluated as written, which the contract's author fixes, and scoring goes on.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

#: Seconds one search of one pattern may take (a page's whole text included; a plain pattern takes
#: milliseconds on megabytes).
TIMEOUT = 1.0


class PatternError(ValueError):
    """A pattern that does not compile (regex's message)."""


class PatternTimeout(Exception):
    """A pattern's search ran past :data:`TIMEOUT` seconds."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        super().__init__(f"pattern {pattern!r} took over {TIMEOUT:g} s to match: overlapping repeats such as "
                         "(a|aa)+ backtrack without end; rewrite it")


@lru_cache(maxsize=256)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled as ``re`` reads it (regex.V0); PatternError when it is not a pattern. regex is
    imported here, when a contract first matches a pattern (8 ms: not on a run without one)."""
    import regex

    try:
        return regex.compile(pattern, flags=regex.V0)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise PatternError(str(exc)) from None


def search(pattern: str, text: str) -> Any:
    """The first match of ``pattern`` in ``text`` or None; PatternError for a bad pattern, PatternTimeout past
    :data:`TIMEOUT` seconds."""
    try:
        return compiled(pattern).search(text, timeout=TIMEOUT)
    except TimeoutError:
        raise PatternTimeout(pattern) from None


def near(pattern: str, text: str, edits: int, share: float, timeout: float) -> bool | None:
    """Does ``text`` hold a stretch that matches ``pattern`` but for a misread: the closest match (regex's fuzzy
    matching) with up to ``edits`` characters changed, added or dropped, at most one in ``share`` of its
    characters? None when that cannot be told within ``timeout`` seconds; False for a pattern that does not
    compile."""
    import regex

    try:
        rx = regex.compile(f"(?:{pattern}){{e<={edits}}}", flags=regex.BESTMATCH | regex.V0)
        m = rx.search(text, timeout=timeout)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return False
    except TimeoutError:
        return None
    return m is not None and sum(m.fuzzy_counts) * share <= len(m.group())


#: The shortest literal stretch :func:`required_literal` gives: a shorter one is read like too many lines.
MIN_LITERAL = 4


@lru_cache(maxsize=256)
def required_literal(pattern: str) -> str | None:
    """The longest run of plain characters (letters, digits, spaces) that every match of ``pattern`` holds, or
    None when none of :data:`MIN_LITERAL` characters can be told: ``rightness`` for ``[Bb]rightness``, ``Order``
    for ``Order [A-Z]{2}-\\d+``. Only the top level counts (a group may be optional), a character before a
    quantifier is left out (``colou?r``: ``colo``), and a pattern with an alternation at its top level or a verbose
    flag has none."""
    if "(?x" in pattern or "(?" in pattern and "x" in pattern.split(")", 1)[0]:
        return None
    runs, run, depth, i = [], "", 0, 0
    while i < len(pattern):
        ch = pattern[i]
        nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
        if ch == "\\":
            runs.append(run)
            run, i = "", i + 2
            continue
        if ch in "[{":  # a class, or a repeat's counts: skip to its closing bracket
            j = pattern.find("]" if ch == "[" else "}", i + 2 if ch == "[" else i + 1)
            runs.append(run)
            run, i = "", (j + 1 if j > 0 else len(pattern))
            continue
        if ch == "|" and depth == 0:
            return None
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch != ")" and (ch.isalnum() or ch == " ") and nxt not in ("?", "*", "+", "{"):
            run += ch
        else:
            runs.append(run)
            run = ""
        i += 1
    runs.append(run)
    best = max((r.strip() for r in runs), key=len)
    return best if len(best) >= MIN_LITERAL else None
