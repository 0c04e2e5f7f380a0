"""Connected groups of changed cells (8-neighbour), numbered as ``scipy.ndimage.label`` numbers them.

The change grid is small (a 1280x800 frame is 160x100 cells of 8x8 px), but importing ``scipy.ndimage``
costs 0.15-0.2 s on this project's machines (it loads scipy's array-API layer and numpy.f2py): a third of
scoring one short run from the command line (issue 16). So the grid is labelled here, by runs: each
row's runs of changed cells, joined to the runs of the next row they touch (8-neighbour: overlapping or
diagonal), with a union-find over runs. ``tests/test_components.py`` checks labels, their numbering and
the boxes against ``scipy.ndimage.label`` and ``find_objects`` on thousands of random grids.
"""

from __future__ import annotations

import numpy as np


def _runs(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every horizontal run of True cells, in raster order: row, first column, column after the last."""
    h, w = cells.shape
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = cells
    step = np.diff(padded, axis=1)
    rows, starts = np.nonzero(step == 1)
    _, ends = np.nonzero(step == -1)
    return rows, starts, ends


def _joined(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int) -> tuple[list[int], list[int]]:
    """Pairs of runs on consecutive rows that touch (8-neighbour): run b of row r+1 touches run a of row r
    when b starts at most one column after a ends and ends at most one column before a starts."""
    span = width + 2
    start_key = rows * span + starts
    end_key = rows * span + ends
    below = (rows + 1) * span
    lo = np.searchsorted(end_key, below + starts, side="left")  # first run below ending at or after a's start
    hi = np.searchsorted(start_key, below + ends, side="right")  # runs below starting at most at a's end
    count = np.maximum(hi - lo, 0)
    a = np.repeat(np.arange(len(rows)), count)
    b = np.repeat(lo, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
    return a.tolist(), b.tolist()


def label(cells: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels 1..n of the 8-connected groups of True cells (0 elsewhere), numbered in the raster order of
    each group's first cell, and n."""
    rows, starts, ends = _runs(cells)
    labels = np.zeros(cells.shape, dtype=np.int32)
    if len(rows) == 0:
        return labels, 0
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    for x, y in zip(*_joined(rows, starts, ends, cells.shape[1])):
        rx, ry = root(x), root(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)  # the earlier run (raster order) stays the root
    number: dict[int, int] = {}
    of_run = np.array([number.setdefault(root(i), len(number) + 1) for i in range(len(rows))], dtype=np.int32)
    lengths = ends - starts
    first = rows * cells.shape[1] + starts
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    labels.reshape(-1)[np.repeat(first, lengths) + offsets] = np.repeat(of_run, lengths)
    return labels, len(number)


def boxes(labels: np.ndarray, n: int) -> list[tuple[slice, slice]]:
    """The box (row slice, column slice) of each label 1..n, as ``scipy.ndimage.find_objects`` gives it."""
    if n == 0:
        return []
    rows, starts, ends = _runs(labels > 0)
    lab = labels[rows, starts] - 1  # a run lies inside one group
    y0 = np.full(n, labels.shape[0])
    x0 = np.full(n, labels.shape[1])
    y1 = np.zeros(n, dtype=np.int64)
    x1 = np.zeros(n, dtype=np.int64)
    np.minimum.at(y0, lab, rows)
    np.maximum.at(y1, lab, rows + 1)
    np.minimum.at(x0, lab, starts)
    np.maximum.at(x1, lab, ends)
    return [(slice(int(a), int(b)), slice(int(c), int(d))) for a, b, c, d in zip(y0, y1, x0, x1)]
