"""analyzers.components labels the change grid as scipy.ndimage.label does (same groups, same numbers,
same boxes), without importing scipy.ndimage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from trajcheck.analyzers import components

EIGHT = np.ones((3, 3), dtype=bool)


def _check(cells: np.ndarray) -> None:
    want, n_want = ndimage.label(cells, structure=EIGHT)
    got, n_got = components.label(cells)
    assert n_got == n_want
    assert np.array_equal(got, want)
    assert components.boxes(got, n_got) == ndimage.find_objects(want)


@pytest.mark.parametrize("seed", range(8))
def test_random_grids_of_every_density(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(400):
        h, w = (int(v) for v in rng.integers(1, 48, 2))
        _check(rng.random((h, w)) < rng.random())


def test_shapes_that_join_late_and_touch_only_at_corners() -> None:
    u = np.zeros((6, 9), dtype=bool)
    u[0:5, 1] = u[0:5, 7] = True  # two arms...
    u[5, 1:8] = True  # ...joined only on the last row: one group, numbered from its first cell
    _check(u)
    diag = np.eye(7, dtype=bool) | np.fliplr(np.eye(7, dtype=bool))
    _check(diag)  # corners only
    _check(np.ones((5, 5), dtype=bool))
    _check(np.zeros((5, 5), dtype=bool))
    spiral = np.zeros((11, 11), dtype=bool)
    spiral[0, :] = spiral[:, 10] = spiral[10, :] = spiral[2:, 0] = spiral[2, 0:9] = spiral[2:9, 8] = True
    _check(spiral)
    _check(np.indices((20, 30)).sum(axis=0) % 2 == 0)  # checkerboard: one group by its corners


def test_a_full_frame_grid() -> None:
    grid = np.zeros((100, 160), dtype=bool)
    grid[10:20, 10:150] = True
    grid[40:42, 3:5] = grid[42, 5] = True  # touches by a corner
    grid[90:, 150:] = True
    labels, n = components.label(grid)
    assert n == 3
    assert components.boxes(labels, n) == [(slice(10, 20), slice(10, 150)), (slice(40, 43), slice(3, 6)),
                                           (slice(90, 100), slice(150, 160))]
