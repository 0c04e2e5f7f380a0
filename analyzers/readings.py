"""Which reading of a log its own screenshots support: the frame alignment and the space of the points.

A log says what was done and names screenshots; what it does not always say is which screenshot was taken
before which action (the *alignment*), and in which space its points are (the *coordinates*). Each reading
is a guess about someone else's data, so it is tested against the data: under the right reading, a click
changes the screen where it lands (a button pressed, a field focused, a menu opened under the pointer), and
typing changes it where the focus is (the point of the last click before it). Under a wrong reading the
change is measured on another pair of frames, or the point is placed where nothing changed.

For every pointed action (a click, or typing after a click) and every candidate reading, :func:`lands` says
whether the change map of the frames the reading pairs with that action has a visible change (any blob but
rendering noise) within :data:`MARGIN` pixels of the point. A point outside the frame does not land. Each
reading's count (``27 of 31``) is what the draft and ``validate`` print.

**The margin rule.** Actions that land (or miss) under two readings alike say nothing about which is right: a
page that repaints in full is changed under every point. Only the actions on which two readings disagree
count, and under the hypothesis that neither reading is better each of them is as likely to favour one as
the other. The reading that lands most is chosen only when, against every other reading, the share of
disagreements it wins is that of a one-sided sign test (exact binomial at 1/2) at :data:`ALPHA`, divided
among the comparisons made (Bonferroni): the chance that a reading with no real advantage is chosen is at
most ``ALPHA``. So at least 7 of 7 disagreements decide between two readings (8 of 8 among three); 3 of 3,
or 10 against 6, do not, and the choice is ``unsure``: the caller keeps its default and says so. A wrong
reading makes every later verdict wrong, so the test is strict: none is better than a wrong one.

Pure: points and :class:`~trajcheck.analyzers.pixeldiff.ChangeMap` values in (the caller decodes the frames
and diffs each pair once), counts and a choice out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .pixeldiff import ChangeMap

#: How far (frame pixels) from a changed blob's box a point may be and still land on that change. A control's
#: own change contains the point (a pressed button, a focus ring around the field, a caret in it). Measured on
#: the sample runs' 84 recorded clicks (real Chromium frames): 64 have a change whose box contains the point
#: (distance 0) in their own frames, the next nearest is 48 px away, and the same clicks measured on the
#: frames of the step before or after are within 8 px of a change 18 and 21 times, within 24 px 19 and 24
#: times. So the margin is one cell of the change grid (8 px, :data:`~trajcheck.analyzers.pixeldiff.CELL`):
#: slack for a point rounded or scaled, no more (tests/test_meaning_readings.py repeats the measurement).
MARGIN = 8
#: The chance, at most, that a reading with no real advantage over the others is chosen.
ALPHA = 0.01
#: The action types that act where they point; typing acts where the last of them pointed.
CLICKS = frozenset({"CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "TRIPLE_CLICK", "LONG_PRESS", "TAP"})
TYPING = frozenset({"TYPE"})


def lands(change: ChangeMap | None, point: tuple[float, float] | None, typing: bool = False) -> bool | None:
    """Whether the screen changed where ``point`` (frame pixels) is: a blob other than rendering noise within
    :data:`MARGIN` px of it. ``typing``: the point is where the focus is (the last click), and typed text
    starts at the field's left edge, not at the point clicked in it: a blob on the point's line (within
    :data:`MARGIN` px of its height) lands, at most half the frame's width to its side (a field as wide as
    the screen is clicked in its middle). False for a point outside the frame; None when there is no change
    map or no point (nothing to check)."""
    if change is None or point is None:
        return None
    x, y = point
    if not (0 <= x < change.width and 0 <= y < change.height):
        return False
    if change.size_changed:
        return True
    m, side = MARGIN, (change.width / 2 if typing else MARGIN)
    return any(b.kind != "noise" and b.box[0] - side <= x < b.box[2] + side and b.box[1] - m <= y < b.box[3] + m
               for b in change.blobs)


def pointed(types: Sequence[str], points: Sequence[tuple[float, float] | None]) -> list[tuple[float, float] | None]:
    """Each step's point to check: a click's own, typing's the last click's before it (where the focus is);
    None for the other steps."""
    out: list[tuple[float, float] | None] = []
    focus: tuple[float, float] | None = None
    for t, p in zip(types, points):
        if t in CLICKS and p is not None:
            focus = p
            out.append(p)
        elif t in TYPING:
            out.append(p if p is not None else focus)
        else:
            out.append(None)
    return out


def typing_at(types: Sequence[str]) -> tuple[bool, ...]:
    """Which steps type (their point is checked as :func:`lands` checks typing)."""
    return tuple(t in TYPING for t in types)


@dataclass(frozen=True)
class Sample:
    """One run as the readings see it: each step's point to check (as logged; None: not checked), each step's
    change map as its frames are read (None: a frame missing), and the scale (x, y) each candidate space
    takes a logged point to frame pixels with (a relative space depends on the run's frame size)."""

    points: tuple[tuple[float, float] | None, ...]
    changes: tuple[ChangeMap | None, ...]
    scales: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    typing: tuple[bool, ...] = ()  # per step: its point is where typing went (:func:`lands`)


@dataclass(frozen=True)
class Tally:
    """How many of the checked actions change the screen where they land under one reading."""

    reading: str
    lands: int
    counted: int

    def __str__(self) -> str:
        return f"{self.lands} of {self.counted} as {self.reading}"


@dataclass(frozen=True)
class Choice:
    """What the evidence chooses for one question (``alignment`` or ``coordinates``): the reading (None:
    unsure), each reading's tally (the chosen one first when there is one), and why, in words."""

    question: str
    chosen: str | None
    tallies: tuple[Tally, ...]
    why: str

    @property
    def unsure(self) -> bool:
        return self.chosen is None

    def evidence(self) -> str:
        """The counts in a line: 'clicks and typing change the screen where they land: 27 of 31 as pre; 3 of 31
        as post'."""
        return "clicks and typing change the screen where they land: " + "; ".join(str(t) for t in self.tallies)

    def to_json(self) -> dict[str, object]:
        return {"question": self.question, "chosen": self.chosen, "why": self.why,
                "tallies": [{"reading": t.reading, "lands": t.lands, "counted": t.counted} for t in self.tallies]}


def tail(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test's p-value of k wins in n disagreements."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n if n else 1.0


def choose(question: str, hits: Mapping[str, Sequence[bool | None]], alpha: float = ALPHA) -> Choice:
    """The reading the evidence supports among ``hits`` (reading -> per checked action, landed or not, None
    not checked; every list in the same order of actions), by the margin rule of the module docstring."""
    names = list(hits)
    tallies = [Tally(r, sum(1 for h in hits[r] if h), sum(1 for h in hits[r] if h is not None)) for r in names]
    if len(names) < 2:
        return Choice(question, names[0] if names else None, tuple(tallies), "only one reading to check")
    ranked = sorted(tallies, key=lambda t: -t.lands)
    best = ranked[0]
    level = alpha / (len(names) - 1)
    twins = []
    for other in ranked[1:]:
        won = lost = 0
        for a, b in zip(hits[best.reading], hits[other.reading]):
            if a is None or b is None or a == b:
                continue
            won, lost = won + bool(a), lost + bool(b)
        if won + lost == 0:
            twins.append(other.reading)  # no checked action tells them apart
            continue
        p = tail(won, won + lost)
        if p > level:
            return Choice(question, None, tuple(ranked),
                          f"{best.reading} and {other.reading} disagree on {won + lost} actions, {won} to {lost}: not "
                          f"enough to choose (a sign test's p = {p:.3g}, more than {level:.3g})")
    if len(twins) == len(ranked) - 1:
        return Choice(question, None, tuple(ranked), "no checked action lands under one reading and not another")
    alike = (f"; {', '.join(twins)} land{'s' if len(twins) == 1 else ''} alike on every checked action (the "
             f"screenshots cannot tell {'it' if len(twins) == 1 else 'them'} from {best.reading}, nor does it "
             "change where any checked action lands)") if twins else ""
    return Choice(question, best.reading, tuple(ranked),
                  f"{best.reading} lands more than every other reading on the actions where they disagree "
                  f"(a sign test, p <= {level:.3g} against each){alike}")


def _distinct(samples: Sequence[Sample], spaces: Sequence[str]) -> list[str]:
    """The candidate spaces that place some checked point further from where each earlier one places it than
    :data:`MARGIN` px or 1% of the frame's width and height (the rule trajcheck.readers.kit.coords uses for "the same
    place"): two spaces that never place a point further apart are one reading here (a smart-resized 1932x1092
    image of a 1920x1080 screenshot is the screenshot, give or take 12 px), and the first listed is kept."""
    out: list[str] = []

    def same(a: str, b: str) -> bool:
        for s in samples:
            (ax, ay), (bx, by) = s.scales[a], s.scales[b]
            size = next(((c.width, c.height) for c in s.changes if c is not None), (0, 0))
            tx, ty = max(MARGIN, 0.01 * size[0]), max(MARGIN, 0.01 * size[1])
            if any(abs(p[0] * ax - p[0] * bx) > tx or abs(p[1] * ay - p[1] * by) > ty
                   for p in s.points if p is not None):
                return False
        return True
    for name in spaces:
        if all(name in s.scales for s in samples) and not any(same(name, d) for d in out):
            out.append(name)
    return out


def _hits(samples: Sequence[Sample], offset: int, space: str) -> list[bool | None]:
    out: list[bool | None] = []
    for s in samples:
        sx, sy = s.scales[space]
        for i, p in enumerate(s.points):
            if p is None:
                continue
            j = i + offset
            change = s.changes[j] if 0 <= j < len(s.changes) else None
            out.append(lands(change, (p[0] * sx, p[1] * sy), i < len(s.typing) and s.typing[i]))
    return out


def weigh(samples: Sequence[Sample], offsets: Mapping[str, int],
          spaces: Sequence[str]) -> tuple[Choice, Choice]:
    """The alignment and the coordinate space the runs' frames support, chosen together.

    ``offsets``: each alignment reading's name and which step's change map it pairs a step's action with
    (0: the step's own frames as read, -1: the step before's, +1: the step after's). ``spaces``: the candidate
    spaces' names, keys of each sample's ``scales``. Every pair of readings is counted; the pair that lands
    most is the starting point (the first listed wins a tie: list the declared or default readings first),
    and each question is then decided with the other held at that pair's reading."""
    names = _distinct(samples, spaces)
    table = {(o, sp): _hits(samples, off, sp) for o, off in offsets.items() for sp in names}
    if not table:
        return (Choice("alignment", None, (), "no candidate reading"),
                Choice("coordinates", None, (), "no candidate space"))
    o0, s0 = max(table, key=lambda k: sum(1 for h in table[k] if h))
    align = choose("alignment", {o: table[(o, s0)] for o in offsets})
    space = choose("coordinates", {sp: table[(o0, sp)] for sp in names})
    return align, space
