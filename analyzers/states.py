"""The states a run visits: progress is reaching a screen the run has not seen, not moving pixels.

A *state* is a group of frames that show the same screen: the same page (where the run records URLs),
global perceptual hashes within :attr:`StateOptions.global_max`, and, because a menu, a dialog or a typed
word changes too little of the screen to move a 64-bit pHash, at most :attr:`StateOptions.cells_max`
cells of the 32x32 grayscale thumbnail (the image the pHash is computed from) that differ by more than
:attr:`StateOptions.cell_delta` levels. The thresholds are measured (``benchmarks/measure_states.py``).

Each step's post frame is then

- ``same``: the screen its pre frame showed;
- ``new``: a screen no earlier frame of the run showed;
- ``return``: a screen an earlier frame showed (with the step where that screen was first seen).

Over the run: the number of distinct states; *oscillations* (a stretch of steps that only go back, or
reach a screen and leave it again at once: A→B→A→B, a menu opened and closed, text typed, cleared and typed
again); and the step from which the run is *stalled*: it ends on a screen first seen at step ``f``, and
everything after ``f`` was undone. Pure: frames come in as :class:`FrameSig` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from ..base.hashing import Hash64

Kind = Literal["new", "return", "same"]

#: Cells in the thumbnail a signature carries (32x32, the pHash's own resize).
CELLS = 32 * 32


@dataclass(frozen=True)
class StateOptions:
    """When two frames show the same screen, measured by ``benchmarks/measure_states.py`` on the 105 labelled
    steps of the sample runs: with a cell moving more than 12 levels and at most 2 such cells, 2 of the 26
    pairs labelled unchanged are two screens (a modal's backdrop that dims the page: a real change of the
    screen, though the dialog is out of view), against 3 at 8 levels (a ticking clock) and 7 with no cell
    allowed; 20 of 79 changed pairs stay one screen (11 focus rings, 2 focused fields, 5 short typed words,
    a checkbox, a badge): not counting them as progress is the safe side, since noise that split one screen
    in two would count as progress."""

    global_max: int = 8  # pHash bits: above this the screens differ, whatever the cells say
    cell_delta: int = 12  # gray levels a cell must move to count as changed
    cells_max: int = 2  # changed cells a same screen may have (a caret, a hover, a ticking clock)
    #: A return must match closer: at most ``return_cells_max`` cells moved by more than ``return_delta``
    #: levels. Text typed over a selection can look like the screen before it at 12 levels (the sample runs'
    #: two such steps: 26 and 31 cells moved by more than 4), while a screen truly gone back to is the same
    #: (the aimless menu run's returns: 0 cells); 23 of the 26 pairs labelled unchanged pass it (the others:
    #: two modal backdrops and a ticking clock). Too loose a return would take progress for going back.
    return_delta: int = 4
    return_cells_max: int = 8


@dataclass(frozen=True)
class FrameSig:
    """What identifies a screen: its pHash, its 32x32 grayscale thumbnail (1,024 bytes, row-major; None when
    unknown), the page it shows (a URL without its fragment; None when the run records none) and, where the run
    records DOM snapshots, their skeleton's key: a field's value or a menu's state the thumbnail is too coarse
    to see."""

    hash: Hash64
    cells: bytes | None = None
    page: str | None = None
    dom: str | None = None  # the page's skeleton key where a DOM snapshot is recorded (form values, open menus)


def changed_cells(a: bytes, b: bytes, delta: int) -> int:
    """How many thumbnail cells differ by more than ``delta`` gray levels."""
    x = np.frombuffer(a, dtype=np.uint8).astype(np.int16)
    y = np.frombuffer(b, dtype=np.uint8).astype(np.int16)
    return int(np.count_nonzero(np.abs(x - y) > delta))


def same_screen(a: FrameSig, b: FrameSig, opts: StateOptions, close: bool = False) -> bool:
    """Do ``a`` and ``b`` show the same screen? ``close``: so closely that ``b`` may count as going back to
    ``a`` (:attr:`StateOptions.return_delta`)."""
    if a.page is not None and b.page is not None and a.page != b.page:
        return False
    if a.dom is not None and b.dom is not None and a.dom != b.dom:
        return False
    if a.hash - b.hash > opts.global_max:
        return False
    if a.cells is None or b.cells is None or len(a.cells) != len(b.cells):
        return True
    if close and changed_cells(a.cells, b.cells, opts.return_delta) > opts.return_cells_max:
        return False
    return changed_cells(a.cells, b.cells, opts.cell_delta) <= opts.cells_max


@dataclass(frozen=True)
class StepState:
    """Where one step's post frame is: its state (numbered from 0 in the run), how the step got there, and
    for a return the step at which that state was first seen (``before``: seen in that step's pre frame).
    ``pre`` is the state of its pre frame (the previous post frame's when it has none of its own)."""

    state: int | None = None
    kind: Kind | None = None
    first_step: int | None = None
    first_before: bool = False
    oscillation: int | None = None  # the oscillation the step is part of, numbered from 1
    pre: int | None = None


@dataclass(frozen=True)
class RunStates:
    """The run's progress in states: ``stalled_from`` is the first step after which the run reached nothing
    it kept (None: it was still reaching new screens at its end), ``returning`` the share of steps that went
    back to a screen seen before."""

    states: int
    returns: int
    returning: float | None
    oscillations: int
    stalled_from: int | None
    final_first_step: int | None  # the step at which the run's final screen was first seen
    final_first_before: bool = False  # ... in that step's pre frame (the start screen: before the first step)


@dataclass
class _State:
    first_step: int
    before: bool
    frames: list[FrameSig]


class _Tracker:
    """The states seen so far, and which one a frame belongs to. The frames kept are compared with a new one
    at once (one numpy operation over their thumbnails), not one pair at a time: a 300-step run of screens
    that look alike has tens of thousands of pairs."""

    def __init__(self, opts: StateOptions) -> None:
        self.opts = opts
        self.states: list[_State] = []
        self._frames: list[FrameSig] = []  # the frames kept, in the order placed
        self._owner: list[int] = []  # each kept frame's state
        self._has: list[bool] = []  # whether its thumbnail is known
        self._cells = np.zeros((64, CELLS), dtype=np.int16)  # their thumbnails, the first len(_frames) rows

    def _candidates(self, sig: FrameSig) -> list[int]:
        """The kept frames that may show ``sig``'s screen: same page and skeleton where known, pHash close."""
        g = self.opts.global_max
        return [i for i, f in enumerate(self._frames)
                if not (f.page is not None and sig.page is not None and f.page != sig.page)
                and not (f.dom is not None and sig.dom is not None and f.dom != sig.dom)
                and f.hash - sig.hash <= g]

    def find(self, sig: FrameSig, close: bool = False) -> int | None:
        """The state showing the same screen as ``sig`` (the closest when several do; ``close``: closely enough
        to go back to), or None. Equal to trying :func:`same_screen` on every kept frame."""
        cand = self._candidates(sig)
        if not cand:
            return None
        x = _cells_of(sig)
        rows = [i for i in cand if x is not None and self._has[i]]
        scored = [(0, self._frames[i].hash - sig.hash, self._owner[i]) for i in cand
                  if x is None or not self._has[i]]  # (cells moved, pHash distance, state): the least wins
        if rows and x is not None:
            diff = np.abs(self._cells[rows] - x)
            moved = np.count_nonzero(diff > self.opts.cell_delta, axis=1)
            ok = moved <= self.opts.cells_max
            if close:
                ok &= np.count_nonzero(diff > self.opts.return_delta, axis=1) <= self.opts.return_cells_max
            scored += [(int(n), self._frames[i].hash - sig.hash, self._owner[i])
                       for i, n, good in zip(rows, moved, ok) if good]
        return min(scored)[2] if scored else None

    def _keep(self, sig: FrameSig, sid: int) -> None:
        n = len(self._frames)
        if n == len(self._cells):
            self._cells = np.concatenate([self._cells, np.zeros_like(self._cells)])
        row = _cells_of(sig)
        self._has.append(row is not None)
        if row is not None:
            self._cells[n] = row
        self._frames.append(sig)
        self._owner.append(sid)

    def add(self, sig: FrameSig, step: int, before: bool) -> int:
        self.states.append(_State(step, before, [sig]))
        self._keep(sig, len(self.states) - 1)
        return len(self.states) - 1

    def place(self, sig: FrameSig, step: int, before: bool, close: bool = False) -> tuple[int, bool]:
        """The state of ``sig`` and whether it is new; a frame of a known state joins it."""
        sid = self.find(sig, close)
        if sid is None:
            return self.add(sig, step, before), True
        if len(self.states[sid].frames) < _MAX_FRAMES:
            self.states[sid].frames.append(sig)
            self._keep(sig, sid)
        return sid, False


def _cells_of(sig: FrameSig) -> np.ndarray | None:
    """A frame's thumbnail as signed gray levels, None when unknown (or not 32x32)."""
    if sig.cells is None or len(sig.cells) != CELLS:
        return None
    return np.frombuffer(sig.cells, dtype=np.uint8).astype(np.int16)


#: Frames kept per state to compare new frames with (the first ones: a state's look drifts slowly, if at all).
_MAX_FRAMES = 8


def track(indices: Sequence[int], pre: Sequence[FrameSig | None], post: Sequence[FrameSig | None],
          opts: StateOptions = StateOptions()) -> tuple[list[StepState], RunStates]:
    """Each step's state and how it got there, then the run's progress. ``pre`` and ``post`` are the steps'
    frames (None where a frame is missing); ``indices`` their step indices."""
    t = _Tracker(opts)
    out: list[StepState] = []
    last: int | None = None  # the state of the previous post frame
    prev: FrameSig | None = None  # the previous post frame
    for idx, p, q in zip(indices, pre, post):
        pre_state = last
        if p is not None and not (last is not None and prev is not None and p == prev):  # not the last post again
            pre_state = t.place(p, idx, True)[0]
        prev = q
        if q is None:
            out.append(StepState(pre=pre_state))
            last = None
            continue
        if p is not None and same_screen(p, q, opts) and pre_state is not None:
            out.append(StepState(pre_state, "same", pre=pre_state))
            last = pre_state
            continue
        sid, new = t.place(q, idx, False, close=True)
        st = t.states[sid]
        kind: Kind = "new" if new else ("same" if sid == pre_state else "return")
        out.append(StepState(sid, kind, None if kind != "return" else st.first_step,
                             kind == "return" and st.before, pre=pre_state))
        last = sid
    out = _oscillations(out)
    return out, _summary(indices, out, len(t.states), t)


#: An oscillation needs at least this many returns.
MIN_RETURNS = 2


def _oscillations(steps: list[StepState]) -> list[StepState]:
    """Mark the stretches of steps that only go back: every step a return, or a new screen left by a return
    at the next step (``same`` steps in between do not break a stretch); at least :data:`MIN_RETURNS`
    returns make an oscillation."""
    def undone(i: int) -> bool:
        if steps[i].kind == "return":
            return True
        if steps[i].kind == "new":
            nxt = next((s for s in steps[i + 1:] if s.kind != "same"), None)
            return nxt is not None and nxt.kind == "return"
        return False

    marks: list[int | None] = [None] * len(steps)
    osc = 0
    i = 0
    while i < len(steps):
        if not undone(i):
            i += 1
            continue
        j = i
        while j + 1 < len(steps) and (undone(j + 1) or steps[j + 1].kind == "same"):
            j += 1
        while j > i and steps[j].kind == "same":  # a stretch ends on its last move, not on a pause after it
            j -= 1
        if sum(1 for s in steps[i:j + 1] if s.kind == "return") >= MIN_RETURNS:
            osc += 1
            for k in range(i, j + 1):
                marks[k] = osc
        i = j + 1
    return [StepState(s.state, s.kind, s.first_step, s.first_before, m, s.pre) for s, m in zip(steps, marks)]


def _summary(indices: Sequence[int], steps: list[StepState], n_states: int, t: _Tracker) -> RunStates:
    placed = [s for s in steps if s.kind is not None]
    returns = sum(1 for s in placed if s.kind == "return")
    oscillations = max((s.oscillation or 0 for s in steps), default=0)
    final = next((s for s in reversed(steps) if s.state is not None), None)
    if final is None or final.state is None:
        return RunStates(n_states, returns, None, oscillations, None, None)
    first = t.states[final.state]
    pos = list(indices).index(first.first_step)
    # the final screen was first seen in the pre frame of step f (before it) or after it: what follows is
    # the stretch the run undid
    start = pos if first.before else pos + 1
    stalled = indices[start] if start < len(indices) and _moves(steps[start:]) else None
    return RunStates(n_states, returns, round(returns / len(placed), 4) if placed else None, oscillations, stalled,
                     first.first_step, first.before)


def _moves(steps: list[StepState]) -> bool:
    """Did any of these steps leave the screen it started on (something that was then undone)?"""
    return any(s.kind in ("new", "return") for s in steps)
