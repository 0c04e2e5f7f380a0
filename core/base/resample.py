"""Pillow's 8-bit LANCZOS downscale to the 32x32 pHash input, as two matrix products.

``imagehash.phash`` spends a third of its time in ``Image.resize((32, 32), LANCZOS)``.
Pillow computes that resize in fixed point: per output pixel, a window of input pixels
times integer coefficients (the Lanczos-3 weights, normalised, scaled by 2**22 and
rounded away from zero), plus 2**21, shifted right by 22 and clipped to 0..255; first
along rows (horizontal pass, to uint8), then along columns of that result.

Every product is a uint8 times an integer below 2**23 and every sum stays below 2**40,
so a float64 matrix product computes the same integer sums exactly, in any order. The
row pass, where the time goes, is cheaper still: each coefficient is split into a high
and a low part whose products and partial sums all stay below 2**24 (exact in float32),
and each block of 8 output columns multiplies only the input columns its windows read.
With the coefficient matrices built the way Pillow builds them (same double arithmetic,
same libm ``sin``), the 32x32 result is the same bytes, and the hash the same bits.

:func:`pass_order` checks that claim against the installed Pillow on a
deterministic noise image of each new frame size, once per machine (the answer is cached on
disk under Pillow's version); a size that does
not match in either pass order (Pillow 13 takes the column pass first for some tall
images) is resized by Pillow.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

#: Pillow's fixed-point precision for 8-bit resampling: 32 - 8 - 2 bits.
PRECISION_BITS = 22
#: Lanczos-3 support, in input pixels at scale 1.
SUPPORT = 3.0
#: The side of the image pHash reads (hash_size 8 x highfreq_factor 4).
HASH_INPUT = 32


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


def _lanczos(x: float) -> float:
    if -3.0 <= x < 3.0:
        return _sinc(x) * _sinc(x / 3)
    return 0.0


Window = tuple[int, list[int]]  # (first input pixel, the integer weights of the pixels from there)


def _windows(in_size: int, out_size: int) -> list[Window]:
    """Pillow's fixed-point LANCZOS weights, one window per output pixel, computed as Pillow computes them
    (the same double arithmetic, the same libm ``sin``)."""
    scale = float(in_size) / out_size
    filterscale = max(scale, 1.0)
    support = SUPPORT * filterscale
    inv = 1.0 / filterscale
    one = float(1 << PRECISION_BITS)
    out: list[Window] = []
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size) - xmin
        w = [_lanczos((x + xmin - center + 0.5) * inv) for x in range(xmax)]
        ww = 0.0
        for v in w:
            ww += v
        if ww != 0.0:
            w = [v / ww for v in w]
        out.append((xmin, [int(-0.5 + v * one) if v < 0 else int(0.5 + v * one) for v in w]))
    return out


@lru_cache(maxsize=64)
def coefficients(in_size: int, out_size: int) -> np.ndarray:
    """The (in_size, out_size) matrix of Pillow's fixed-point LANCZOS weights for resizing a
    whole axis of ``in_size`` pixels to ``out_size`` (as float64, exact integers). The weights of a size
    are computed once per machine (4-11 ms for a 1280-2560 pixel axis, in every process) and kept in the
    on-disk cache beside the pass orders (:func:`_cached_windows`)."""
    m = np.zeros((in_size, out_size), dtype=np.float64)
    for xx, (xmin, weights) in enumerate(_cached_windows(in_size, out_size)):
        m[xmin:xmin + len(weights), xx] = weights
    m.setflags(write=False)
    return m


def _valid_windows(got: Any, in_size: int, out_size: int) -> bool:
    """A cached entry has one window per output pixel, inside the axis, with integer weights below 2**23
    in size summing to 2**22 within rounding (Pillow normalises each window)."""
    if not isinstance(got, list) or len(got) != out_size:
        return False
    for win in got:
        if not (isinstance(win, list) and len(win) == 2 and type(win[0]) is int and isinstance(win[1], list)):
            return False
        xmin, weights = win
        if xmin < 0 or xmin + len(weights) > in_size \
                or not all(type(v) is int and -(1 << PRECISION_BITS + 1) < v < 1 << PRECISION_BITS + 1
                           for v in weights) \
                or abs(sum(weights) - (1 << PRECISION_BITS)) > len(weights):
            return False
    return True


def _cached_windows(in_size: int, out_size: int) -> list[Window]:
    """:func:`_windows` through the on-disk cache: one file per axis size (a 4K axis is 120-190 KB of
    weights), its entry under this module's library key, checksummed, and read only from a file this user
    owns and nobody else can write (:func:`trajcheck.base.diskcache.read_private`). Anything else, or anything
    wrong, means computing them again."""
    from . import diskcache

    lib, name = _library_key(), f"lanczos-{in_size}-{out_size}"
    if lib is None:
        return _windows(in_size, out_size)
    got = diskcache.entry_value(diskcache.read_private(name).get(lib))
    if _valid_windows(got, in_size, out_size):
        return [(int(a), list(b)) for a, b in got]
    windows = _windows(in_size, out_size)
    diskcache.write(name, {lib: diskcache.checked_entry([[a, b] for a, b in windows])})
    return windows


def _round(acc: np.ndarray) -> np.ndarray:
    """Pillow's clip8: (sum + 2**21) >> 22, clipped to 0..255 (exact on float64 integers)."""
    acc += float(1 << (PRECISION_BITS - 1))
    acc *= 1.0 / (1 << PRECISION_BITS)
    np.floor(acc, out=acc)
    np.clip(acc, 0.0, 255.0, out=acc)
    return acc


#: Output columns per block of the banded product (a block reads only the input columns its windows cover).
BLOCK = 8
#: Low bits of each coefficient in the float32 split: coefficient = high * 2**LOW_BITS + low.
LOW_BITS = 7
#: float32 holds every integer below 2**24 exactly.
F32_EXACT = float(1 << 24)


@lru_cache(maxsize=64)
def _banded(in_size: int, out_size: int) -> tuple[tuple[int, int, int, int, np.ndarray], ...] | None:
    """The row pass as float32 products that stay exact: per block of BLOCK output columns, the input
    columns its windows read and the matrix [high | low] of their coefficients. Each uint8 x high and
    uint8 x low product and every partial sum of either is an integer below 2**24 (checked here from the
    window widths and coefficient sizes), so float32 arithmetic is exact in any summation order. None when
    a window is too wide for that bound (the float64 product is used)."""
    k = coefficients(in_size, out_size).astype(np.int64)
    high = np.floor_divide(k, 1 << LOW_BITS)
    low = k - high * (1 << LOW_BITS)
    taps = int((k != 0).sum(axis=0).max())
    if 255.0 * float(np.abs(high).sum(axis=0).max()) >= F32_EXACT or 255.0 * (2**LOW_BITS - 1) * taps >= F32_EXACT:
        return None
    blocks = []
    for j0 in range(0, out_size, BLOCK):
        j1 = min(j0 + BLOCK, out_size)
        rows = np.flatnonzero((k[:, j0:j1] != 0).any(axis=1))
        a, c = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 1)
        m = np.ascontiguousarray(np.concatenate([high[a:c, j0:j1], low[a:c, j0:j1]], axis=1), dtype=np.float32)
        m.setflags(write=False)
        blocks.append((j0, j1, a, c, m))
    return tuple(blocks)


_scratch: dict[int, np.ndarray] = {}


def _scratch_f32(gray: np.ndarray) -> np.ndarray:
    """``gray`` as float32 in a buffer reused for every image of that width (frames of a run share their
    size; a band of a frame's rows takes the top of the same buffer): a fresh 4-16 MB array per frame costs
    as much in page faults as the conversion itself. At most 8 widths are kept, each as tall as the
    tallest image of that width seen."""
    h, w = gray.shape
    buf = _scratch.get(w)
    if buf is None or buf.shape[0] < h:
        if buf is None and len(_scratch) >= 8:
            _scratch.clear()
        buf = _scratch[w] = np.empty((h, w), dtype=np.float32)
    out = buf[:h]
    np.copyto(out, gray)
    return out


def _rows_pass(gray: np.ndarray, size: int) -> np.ndarray:
    """Pillow's horizontal pass over every row of ``gray`` (uint8, (h, w)): (h, size) float64, rounded."""
    h, w = gray.shape
    plan = _banded(w, size)
    if plan is None:
        return _round(gray.astype(np.float64) @ coefficients(w, size))
    x = _scratch_f32(gray)
    high = np.empty((h, size), dtype=np.float64)
    low = np.empty((h, size), dtype=np.float64)
    for j0, j1, a, c, m in plan:
        r = x[:, a:c] @ m
        n = j1 - j0
        high[:, j0:j1] = r[:, :n]
        low[:, j0:j1] = r[:, n:]
    high *= float(1 << LOW_BITS)
    high += low
    return _round(high)


def _distinct_rows(gray: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Screenshots repeat rows (flat backgrounds, margins): a median of 31% of rows differ from the row
    above on the sample and real frames. Returns (the rows that differ from their predecessor, the index
    of each row among them), or None when too few repeat to be worth it. Equal rows give equal
    row-pass results, so computing each once is exact."""
    h, w = gray.shape
    if h < 64 or not gray.flags.c_contiguous or w % 8:
        return None
    words = gray.view(np.uint64)
    new = np.empty(h, dtype=bool)
    new[0] = True
    np.any(words[1:] != words[:-1], axis=1, out=new[1:])
    n = int(np.count_nonzero(new))
    if n > 0.8 * h:
        return None
    return gray[new], np.cumsum(new) - 1


def row_pass(gray: np.ndarray, size: int = HASH_INPUT) -> np.ndarray:
    """The first half of the row-first resize: each row of ``gray`` (uint8, (h, w)) resized to ``size``
    columns, rounded, as a new (h, size) float64 array. Each output row depends on its input row only, so
    the result for a band of rows is that band of the whole image's result."""
    h, w = gray.shape
    if w == size:
        return gray.astype(np.float64)
    rows = _distinct_rows(gray)
    return _rows_pass(gray, size) if rows is None else _rows_pass(rows[0], size)[rows[1]]


def column_pass(rows: np.ndarray, size: int = HASH_INPUT) -> np.ndarray:
    """The second half: the columns of a :func:`row_pass` result resized to ``size`` rows, as uint8."""
    h = rows.shape[0]
    out = rows if h == size else _round(coefficients(h, size).T @ rows)  # (size, h) @ (h, size), small
    return out.astype(np.uint8)


def _h_first(gray: np.ndarray, size: int) -> np.ndarray:
    return column_pass(row_pass(gray, size), size)


def resize_gray(gray: np.ndarray, size: int = HASH_INPUT, order: str = "h") -> np.ndarray:
    """``Image.fromarray(gray).resize((size, size), LANCZOS)`` as a uint8 array, for a 2-D uint8 ``gray``,
    with the row pass first (``order="h"``, Pillow's usual order) or the column pass first (``"v"``)."""
    if order == "v":
        return _h_first(gray.T, size).T
    return _h_first(gray, size)


_orders: dict[tuple[int, int], str | None] = {}

#: The cache file of pass orders (trajcheck.base.diskcache), and the key of this process's libraries in it.
_CACHE = "pass-order"
_cache_key: str | None = None


def _library_key() -> str | None:
    """What a cached pass order depends on: Pillow's version and this module's code; None when the code
    cannot be read (an install without sources): the cache is then not used."""
    global _cache_key
    if _cache_key is None:
        import hashlib

        import PIL

        try:
            code = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=8).hexdigest()
        except OSError:
            return None
        _cache_key = f"pillow {PIL.__version__}, resample {code}"
    return _cache_key


def _probe(width: int, height: int) -> str | None:
    noise = np.random.default_rng(width * 100003 + height).integers(0, 256, (height, width), dtype=np.uint8)
    want = np.asarray(Image.fromarray(noise).resize((HASH_INPUT, HASH_INPUT), Image.Resampling.LANCZOS))
    return next((o for o in ("h", "v") if np.array_equal(resize_gray(noise, order=o), want)), None)


def pass_order(width: int, height: int) -> str | None:
    """The pass order in which :func:`resize_gray` gives the installed Pillow's bytes for ``width`` x
    ``height`` images ("h" or "v"; None: neither, let Pillow resize). Tested on a seeded noise image (noise
    exposes any difference in pass order, coefficients or rounding) once per size on this machine: the
    answer is kept in the on-disk cache (:mod:`trajcheck.base.diskcache`) under the Pillow version and this
    module's code, and in memory for the process."""
    key = (width, height)
    if key not in _orders:
        from . import diskcache

        lib, size = _library_key(), f"{width}x{height}"
        known = diskcache.read(_CACHE).get(lib) if lib is not None else None
        if isinstance(known, dict) and known.get(size, "?") in ("h", "v", None):
            _orders[key] = known[size]
        else:
            _orders[key] = _probe(width, height)
            if lib is not None:
                entry = known if isinstance(known, dict) else {}
                entry[size] = _orders[key]
                diskcache.write(_CACHE, {lib: entry})  # other libraries' entries are dropped: they are stale
    return _orders[key]
