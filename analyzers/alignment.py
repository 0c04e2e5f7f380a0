"""Two runs of one task, step by step: which steps correspond, and where the runs went different ways.

Screen states are numbered per run (``state_id``), so across runs a screen is told by its frame: the same
page (the URL's path, where both runs record URLs: two arms may run against two hosts, and a query often
carries a session id) and pHashes within :attr:`AlignOptions.screen_max` bits, the states analyzer's
threshold (analyzers/states.py). An action is its type and its target: keys, text or URL as recorded, a
scroll's direction, and a point within :attr:`AlignOptions.point_tolerance` of the screen's width and
height (points are compared as shares of each run's screen, so runs recorded at two sizes still match).

The steps are aligned by a global sequence alignment (Needleman-Wunsch) that scores each pair of steps by
its screen before and its action, so a step one run took and the other did not is a gap, and the steps
after it still pair with their counterparts. Each aligned pair is then classified (:class:`PairMatch`),
and the first pair that is not ``same`` is where the runs diverge. Pure: steps come in as
:class:`StepSig` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..base.reasons import PairMatch


@dataclass(frozen=True)
class AlignOptions:
    """What counts as the same screen and the same action, and how the alignment weighs them.

    A screen that matches weighs more than an action that does (2 against 1): two runs that reached the
    same screen and acted differently there pair up, rather than two equal actions on different screens (a
    DONE on the goal page and a DONE on the form). A pair with nothing in common (0) still beats two gaps
    (-2): runs that share nothing are shown step against step."""

    screen_max: int = 8  # pHash bits, as analyzers/states.py's StateOptions.global_max
    point_tolerance: float = 0.025  # a share of the screen's width (x) and height (y): 32 x 20 px at 1280x800
    screen_weight: float = 2.0
    action_weight: float = 1.0
    gap: float = -1.0


#: The options a diff uses unless told otherwise.
DEFAULTS = AlignOptions()


@dataclass(frozen=True)
class Screen:
    """A frame as far as comparing runs goes: its pHash's 64 bits (``Hash64.value``; None without a frame)
    and its page (None when the run records no URL). The bits, not a ``Hash64``: trajcheck.base.hashing loads
    imagehash and Pillow, a tenth of a second of `trajcheck diff`'s start, for a Hamming distance."""

    hash: int | None = None
    page: str | None = None

    def __sub__(self, other: "Screen") -> int | None:
        """The Hamming distance of the two pHashes, None without both."""
        return None if self.hash is None or other.hash is None else (self.hash ^ other.hash).bit_count()


@dataclass(frozen=True)
class StepSig:
    """One step: its index, its action (``kind`` the type, ``target`` keys, text, URL or a scroll's
    direction, ``point`` as shares of the screen), the screens before and after it, and ``label``, how the
    action reads (``CLICK (640, 316)``)."""

    index: int
    kind: str
    target: str | None = None
    point: tuple[float, float] | None = None
    before: Screen = Screen()
    after: Screen = Screen()
    label: str = ""


@dataclass(frozen=True)
class Compared:
    """Two frames compared: ``same`` True, False or None (a frame missing), and their pHash distance."""

    same: bool | None
    distance: int | None = None
    pages: tuple[str, str] | None = None  # the two pages, when they differ

    @property
    def word(self) -> str:
        return {True: "same", False: "different", None: "unknown"}[self.same]


@dataclass(frozen=True)
class Pair:
    """One row of the alignment: a step of each run (None: the run has no step here), how they compare
    (``before``/``after``: the screens; ``action``: ``same``, ``different_target``, ``different_action``)
    and the pair's :class:`PairMatch`."""

    a: StepSig | None
    b: StepSig | None
    match: PairMatch
    before: Compared = Compared(None)
    after: Compared = Compared(None)
    action: str | None = None


def compare_screens(x: Screen, y: Screen, opts: AlignOptions) -> Compared:
    """Do two frames (of two runs) show the same screen? Different pages decide it without the hashes."""
    d = x - y
    if x.page is not None and y.page is not None and x.page != y.page:
        return Compared(False, d, (x.page, y.page))
    return Compared(None) if d is None else Compared(d <= opts.screen_max, d)


def compare_actions(a: StepSig, b: StepSig, opts: AlignOptions) -> PairMatch:
    """``same``, ``different_target`` (one type, another target) or ``different_action``."""
    if a.kind != b.kind:
        return PairMatch.DIFFERENT_ACTION
    if a.target != b.target or (a.point is None) != (b.point is None):
        return PairMatch.DIFFERENT_TARGET
    if a.point is not None and b.point is not None and (abs(a.point[0] - b.point[0]) > opts.point_tolerance
                                                        or abs(a.point[1] - b.point[1]) > opts.point_tolerance):
        return PairMatch.DIFFERENT_TARGET
    return PairMatch.SAME


def _score(a: StepSig, b: StepSig, opts: AlignOptions) -> float:
    """How alike two steps are: their screens before (the same 1, unknown 0.5), their actions (the same 1,
    another target 0.5), weighted. Called for every pair of steps: it makes no Compared values."""
    x, y = a.before, b.before
    if x.page is not None and y.page is not None and x.page != y.page:
        screen = 0.0
    elif x.hash is None or y.hash is None:
        screen = 0.5
    else:
        screen = 1.0 if (x.hash ^ y.hash).bit_count() <= opts.screen_max else 0.0
    action = compare_actions(a, b, opts)
    return (opts.screen_weight * screen
            + opts.action_weight * (1.0 if action is PairMatch.SAME else 0.5 if action is PairMatch.DIFFERENT_TARGET
                                    else 0.0))


def _path(a: Sequence[StepSig], b: Sequence[StepSig], opts: AlignOptions) -> list[tuple[int | None, int | None]]:
    """The best alignment's pairs of positions (None: a gap). The table holds the best score of each pair of
    suffixes, so that the way through it is read from the first steps on: where two alignments score alike,
    the pair of steps comes first and the gaps last (a run that stopped early ends on its gaps), then a
    step of A alone before one of B; the same runs always align the same way."""
    n, m = len(a), len(b)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]  # 0 the pair, 1 a step of A alone, 2 a step of B alone
    for i in range(n - 1, -1, -1):
        score[i][m], move[i][m] = score[i + 1][m] + opts.gap, 1
    for j in range(m - 1, -1, -1):
        score[n][j], move[n][j] = score[n][j + 1] + opts.gap, 2
    for i in range(n - 1, -1, -1):
        row, nxt = score[i], score[i + 1]
        for j in range(m - 1, -1, -1):
            best, how = nxt[j + 1] + _score(a[i], b[j], opts), 0
            if nxt[j] + opts.gap > best:
                best, how = nxt[j] + opts.gap, 1
            if row[j + 1] + opts.gap > best:
                best, how = row[j + 1] + opts.gap, 2
            row[j], move[i][j] = best, how
    out: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n or j < m:
        how = move[i][j]
        if how == 0:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif how == 1:
            out.append((i, None))
            i += 1
        else:
            out.append((None, j))
            j += 1
    return out


def align(a: Sequence[StepSig], b: Sequence[StepSig], opts: AlignOptions = DEFAULTS) -> list[Pair]:
    """The two runs' steps aligned, each pair classified: a pair of steps is ``different_screen`` (they
    acted on different screens), else ``different_action`` or ``different_target``, else
    ``different_result`` (the same action on the same screen led to different screens), else ``same``; a
    step alone is ``extra_step`` while the other run goes on later, ``run_ended`` when it has no more steps."""
    path = _path(a, b, opts)
    last_a = max((p for p, _ in path if p is not None), default=-1)
    last_b = max((q for _, q in path if q is not None), default=-1)
    seen_a = seen_b = -1
    out = []
    for p, q in path:
        if p is not None and q is not None:
            seen_a, seen_b = p, q
            out.append(_classify(a[p], b[q], opts))
        elif p is not None:
            seen_a = p
            out.append(Pair(a[p], None, PairMatch.RUN_ENDED if seen_b == last_b else PairMatch.EXTRA_STEP))
        elif q is not None:
            seen_b = q
            out.append(Pair(None, b[q], PairMatch.RUN_ENDED if seen_a == last_a else PairMatch.EXTRA_STEP))
    return out


def _classify(x: StepSig, y: StepSig, opts: AlignOptions) -> Pair:
    before = compare_screens(x.before, y.before, opts)
    after = compare_screens(x.after, y.after, opts)
    action = compare_actions(x, y, opts)
    if before.same is False:
        match = PairMatch.DIFFERENT_SCREEN
    elif action is not PairMatch.SAME:
        match = action
    elif after.same is False:
        match = PairMatch.DIFFERENT_RESULT
    else:
        match = PairMatch.SAME
    return Pair(x, y, match, before, after, str(action))


def first_divergence(pairs: Sequence[Pair]) -> int | None:
    """The position of the first pair that does not match, None when the runs agree throughout."""
    return next((i for i, p in enumerate(pairs) if p.match is not PairMatch.SAME), None)


def _screens(c: Compared) -> str:
    if c.pages is not None:
        return f"pages {c.pages[0]} and {c.pages[1]}"
    return f"pHash {c.distance} bits apart"


def explain(pair: Pair, names: tuple[str, str] = ("A", "B")) -> str:
    """Why a pair is what it is, in a sentence: 'A: DONE; B: CLICK (1072, 699)'."""
    na, nb = names
    x, y = pair.a, pair.b
    if x is None or y is None:
        alone, name, other = (x, na, nb) if x is not None else (y, nb, na)
        assert alone is not None  # a pair always holds a step of one run at least
        if pair.match is PairMatch.RUN_ENDED:
            return f"{other} had ended; {name} went on with step {alone.index}: {alone.label}"
        return f"{name} took step {alone.index} ({alone.label}), which {other} has no counterpart of"
    if pair.match is PairMatch.DIFFERENT_SCREEN:
        return (f"{na} step {x.index} and {nb} step {y.index} acted on different screens "
                f"({_screens(pair.before)}): {na} {x.label}; {nb} {y.label}")
    if pair.match is PairMatch.DIFFERENT_ACTION or pair.match is PairMatch.DIFFERENT_TARGET:
        return f"{na} step {x.index}: {x.label}; {nb} step {y.index}: {y.label}"
    if pair.match is PairMatch.DIFFERENT_RESULT:
        return f"the same {x.label} on the same screen led to different screens ({_screens(pair.after)})"
    return f"the same {x.label} on the same screen"
