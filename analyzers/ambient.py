"""Learning, per run, which parts of the screen change on their own.

A ticking clock, a spinner or a blinking caret changes the screen whether or not
the agent did anything. Such a change must not count as the effect of a click.
The evidence is the run itself: a cell of the change grid is *ambient* when it
changes in many transitions of the run, outside the area the action aimed at,
or while the agent was idle (WAIT steps, and the gap between a step's post frame
and the next step's pre frame when the runner took two screenshots).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .pixeldiff import CELL, Box, ChangeMap

#: A transition that repaints more than this share of the screen (a page load) teaches nothing about ambient change.
MAX_REPAINT_SHARE = 0.25
#: A cell is ambient when it changed in at least this share of the counted transitions...
RECURRENCE_SHARE = 0.5
#: ... and in at least this many of them, with at least MIN_TRANSITIONS transitions counted.
MIN_CHANGES = 2
MIN_TRANSITIONS = 3
#: A blob counts as ambient when this share of its changed cells is ambient.
BLOB_AMBIENT_SHARE = 0.8


@dataclass(frozen=True)
class Transition:
    change: ChangeMap
    idle: bool  # nothing was done between the two frames (WAIT, or a gap between steps)
    region: Box | None = None  # where the action aimed (excluded from learning for that transition)
    page: str | None = None  # the page (URL) both frames show; ambient change is learned per page


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
        cells = cells.copy()
        if t.region is not None and not t.idle:
            cells[_cells_of(t.region, shape)] = False
        count += cells
        if t.idle:
            idle_count += cells
    ambient = (idle_count >= 1) & (count >= MIN_CHANGES)
    if n >= MIN_TRANSITIONS:
        ambient |= count >= max(MIN_CHANGES, math.ceil(RECURRENCE_SHARE * n))
    if not ambient.any():
        return None
    # Digits of a clock do not all change every time: widen by one cell.
    from scipy import ndimage  # imported on first use: keeps the CLI's start-up light

    return ndimage.binary_dilation(ambient, structure=np.ones((3, 3), dtype=bool))


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
