"""Learning, per run, which parts of the screen change on their own.

A ticking clock, a spinner or a blinking caret changes the screen whether or not
the agent did anything. Such a change must not count as the effect of a click.
But an action's effect is often far from its click point (a quiz click brings
the next question, a filter re-lists the results), and it too recurs at every
action: change is learned as ambient only from evidence that the agent did not
cause it. A cell of the change grid is *ambient* when

1. it changed while nothing was done, at least once, and in at least two
   transitions in all: *idle* transitions are WAIT and DONE steps and the gap
   between a step's post frame and the next step's pre frame when the runner took
   two screenshots; a pointer action whose client witness saw no DOM mutation,
   no network request and no URL change, and whose focused element was recorded
   unchanged (a field losing focus repaints far from the click), is idle outside
   the area it aimed at (a
   checkbox tick changes a property, not the DOM, so the aimed area is kept out).
   Keyboard actions never are: typing changes a field's value, a property the
   witness does not see, somewhere the step does not locate. Such a quiet click's
   change inside its aimed area is still counted as seen (not as idle): a
   spinner beside the click point that also turns during a later WAIT or DONE
   is ambient even in a run too short to show it before the click, while a
   checkbox tick, which no idle frame pair repeats, stays the click's effect;
2. or it changed, outside the area the action aimed at, in at least half of the
   run's transitions (and at least two), each time inside a *small* patch of
   change (a connected group of changed cells whose box is at most
   ``SMALL_PATCH_PX``: a clock's digits, a spinner, a progress bar, a caret). A
   large region whose content changes each time the agent acts (new text, a new
   list) is the agent's doing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..base.box import Box
from ..schemas.records import Step

from . import components
from .image_evidence import ImageEvidence
from .pixeldiff import CELL, ChangeMap, grow

#: A transition that repaints more than this share of the screen (a page load) teaches nothing about ambient change.
MAX_REPAINT_SHARE = 0.25
#: A cell is ambient when it changed in at least this share of the counted transitions...
RECURRENCE_SHARE = 0.5
#: ... and in at least this many of them, with at least MIN_TRANSITIONS transitions counted.
MIN_CHANGES = 2
MIN_TRANSITIONS = 3
#: A blob counts as ambient when this share of its changed cells is ambient.
BLOB_AMBIENT_SHARE = 0.8
#: The largest patch of change (box area, px) that recurrence alone can make ambient: 64x64, a spinner or a
#: clock. Measured: the clock of the ticker sample changes in 16x16 and 24x24 patches per digit; a quiz
#: answer in the Cambridge Dictionary WebVoyager run brings a new question in 120x100 and 190x200 patches.
SMALL_PATCH_PX = 64 * 64


@dataclass(frozen=True)
class Transition:
    change: ChangeMap
    idle: bool  # nothing was done between the two frames (WAIT, or a gap between steps)
    region: Box | None = None  # where the action aimed (excluded from learning for that transition)
    page: str | None = None  # the page (URL) both frames show; ambient change is learned per page
    quiet: bool = False  # the client witness saw no DOM mutation, no network and no URL change
    focus_kept: bool = False  # ... and the focused element was recorded before and after, unchanged


def _patches(cells: np.ndarray) -> tuple[np.ndarray, Sequence[tuple[slice, slice]]]:
    """Connected groups (8-neighbour) of changed cells: their labels and boxes. (The diff labelled the same
    cells; its labels are not kept: a full-grid label array per step would hold 4x what the cells do, for as
    long as the run is scored, to save a fraction of a millisecond.)"""
    labels, n = components.label(cells)
    return labels, components.boxes(labels, n)


def _small_patches(labels: np.ndarray, boxes: Sequence[tuple[slice, slice]]) -> np.ndarray:
    """The changed cells that lie in patches whose box is at most SMALL_PATCH_PX."""
    small = np.zeros(labels.shape, dtype=bool)
    for i, sl in enumerate(boxes, start=1):
        if (sl[0].stop - sl[0].start) * (sl[1].stop - sl[1].start) * CELL * CELL <= SMALL_PATCH_PX:
            small[sl] |= labels[sl] == i
    return small


def _away_from(labels: np.ndarray, aimed: tuple[slice, slice]) -> np.ndarray:
    """The changed cells of the patches that do not touch the aimed area: a focus ring around a wide
    field reaches past the area around the click, and it is still the click's doing."""
    touched = np.zeros(int(labels.max()) + 1, dtype=bool)  # by label (np.unique would import numpy.ma)
    touched[labels[aimed]] = True
    touched[0] = True
    return ~touched[labels]


def _cells_of(box: Box, shape: tuple[int, int]) -> tuple[slice, slice]:
    return (slice(box[1] // CELL, min(shape[0], -(-box[3] // CELL))),
            slice(box[0] // CELL, min(shape[1], -(-box[2] // CELL))))


def learn_ambient(transitions: list[Transition]) -> np.ndarray | None:
    """Boolean cell grid of ambient change for one run, or None when nothing was learned."""
    grids = [t for t in transitions if t.change.cells.size and not t.change.size_changed]
    if not grids:
        return None
    shape = grids[0].change.cells.shape
    count = np.zeros(shape, dtype=np.int32)
    idle_count = np.zeros(shape, dtype=np.int32)
    small_count = np.zeros(shape, dtype=np.int32)
    n = 0
    for t in grids:
        cells = t.change.cells
        if cells.shape != shape:
            continue
        if cells.mean() > MAX_REPAINT_SHARE:
            continue
        n += 1
        if not cells.any():
            continue
        labels, boxes = _patches(cells)
        if t.region is not None and not t.idle:
            aimed = _cells_of(t.region, shape)
            if t.quiet:  # the witness saw the click do nothing: what changed in the aimed area is seen too
                if t.focus_kept:  # a focus moving off a field repaints it, far from the click
                    idle_count += _away_from(labels, aimed)
                count += cells
            cells = cells.copy()
            cells[aimed] = False
            labels = np.where(cells, labels, 0)
            if not t.quiet:
                count += cells
        else:
            if t.idle:
                idle_count += cells
            count += cells
        small_count += _small_patches(labels, boxes)
    ambient = (idle_count >= 1) & (count >= MIN_CHANGES)
    if n >= MIN_TRANSITIONS:
        ambient |= small_count >= max(MIN_CHANGES, math.ceil(RECURRENCE_SHARE * n))
    if not ambient.any():
        return None
    # Digits of a clock do not all change every time: widen by one cell.
    return grow(ambient, 1)


def is_ambient(box: Box, change: ChangeMap, ambient: np.ndarray | None) -> bool:
    """Is the change inside ``box`` mostly in ambient cells?"""
    if ambient is None or ambient.shape != change.cells.shape:
        return False
    sl = _cells_of(box, ambient.shape)
    changed = change.cells[sl]
    total = int(changed.sum())
    if total == 0:
        return False
    return int((changed & ambient[sl]).sum()) >= BLOB_AMBIENT_SHARE * total


def page_of(s: Step) -> str | None:
    """The page a step acted on (its URL before the action): the key of the ambient map it is judged with."""
    return s.page.url_before if s.page else None


def _witness_quiet(s: Step) -> bool:
    """The client witness recorded that the step caused no DOM mutation, no request and no URL change."""
    c = s.client
    return c is not None and c.did_dom_mutate is False and c.did_network_occur is False \
        and c.did_url_change is False


def _navigated(s: Step) -> bool:
    """The step moved to another URL: its frames show two pages, nothing ambient to learn."""
    return bool(s.page and s.page.url_before and s.page.url_after and s.page.url_before != s.page.url_after)


def transition_of(s: Step, ev: ImageEvidence) -> Transition | None:
    """The frame pair of a step as evidence for :func:`learn_ambient`, or None when it teaches nothing (no
    frames, one frame for both, or a navigation to another page). The offline scorer and the live verifier
    (:mod:`trajcheck.live`) both use it."""
    if ev.change is None or s.frame_pre == s.frame_post or _navigated(s):
        return None
    return Transition(ev.change, idle=s.action.type in ("WAIT", "DONE"), region=ev.region, page=page_of(s),
                      quiet=_witness_quiet(s),
                      focus_kept=bool(s.page and s.page.focus_before and s.page.focus_before == s.page.focus_after))


def learn_per_page(transitions: list[Transition]) -> dict[str | None, np.ndarray | None]:
    """Ambient cells learned separately for each page: a clock on one page says nothing about the next."""
    return {key: learn_ambient([t for t in transitions if t.page == key]) for key in {t.page for t in transitions}}
