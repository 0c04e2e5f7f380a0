"""Exact pixel difference between two decoded frames, grouped into change blobs.

pHash says *how much* the picture moved; this says *where* and *what shape*:
a thin closed outline (a focus ring drawn or removed), a caret-sized vertical
line (a blinking text cursor), noise (every pixel moved by a few levels), a restyle under the pointer (the clicked
control recoloured by its :hover/:active style, its shapes unchanged), or
content (anything else: text, a toast, a checkbox mark). Pure: arrays in, a
small summary out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import components

#: Changed pixels are grouped on a grid of CELL x CELL pixel cells; blobs are 8-connected groups of cells.
CELL = 8
#: Width of the border band in which a focus outline must lie (focus rings and box-shadows are 1-5 px).
OUTLINE_BAND = 6
#: An outline's interior may hold this share of changed pixels (a caret blinking inside a focused field).
OUTLINE_INTERIOR_MAX = 0.02
#: Each side of an outline must be covered over this share of its length.
OUTLINE_SIDE_MIN = 0.6
#: A caret is a vertical line at most this wide, with a height in this range.
CARET_MAX_WIDTH = 3
CARET_HEIGHT = (6, 48)
#: A restyle blob covers the action point (with this margin, px) and at most this share of the frame.
RESTYLE_POINT_MARGIN = 2
RESTYLE_MAX_AREA = 0.03
#: Gray-level step (0-255) between neighbouring pixels that counts as an edge.
EDGE_STEP = 24
#: Edges may move this far (px) and this share of edge pixels may appear or vanish in a restyle.
EDGE_SLACK = 2
RESTYLE_EDGE_CHANGE_MAX = 0.05
#: A blob whose pixels all moved by at most this much (0-255, any channel) is rendering noise
#: (anti-aliasing, an unfinished colour transition): under 5% of the range is not visible content.
#: A faint message on a dark theme differs from its background by about 25.
NOISE_MAX_DELTA = 12
#: More blobs than this are not classified one by one (a full repaint); they count as content.
MAX_BLOBS = 400

from ..base.box import Box  # noqa: E402  (left, top, right, bottom; right/bottom exclusive)


@dataclass(frozen=True)
class Blob:
    box: Box
    px: int
    kind: str  # "content" | "outline" | "caret" | "restyle" | "noise"


@dataclass(frozen=True, eq=False)
class ChangeMap:
    """Where two frames differ."""

    width: int
    height: int
    changed_px: int
    bbox: Box | None
    blobs: tuple[Blob, ...] = ()
    cells: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))  # changed cells
    size_changed: bool = False
    region_px: int | None = None  # changed pixels inside the region box, when one was given

    @property
    def changed(self) -> bool:
        return self.changed_px > 0


def _grid(h: int, w: int) -> tuple[int, int]:
    return -(-h // CELL), -(-w // CELL)


def _classify(sub: np.ndarray) -> str:
    """Shape of one blob's changed pixels, cropped to its exact bounding box."""
    h, w = sub.shape
    if w <= CARET_MAX_WIDTH and CARET_HEIGHT[0] <= h <= CARET_HEIGHT[1]:
        return "caret"
    b = OUTLINE_BAND
    if w > 2 * b + 2 and h > 2 * b + 2:
        interior = sub[b:-b, b:-b]
        if np.count_nonzero(interior) <= OUTLINE_INTERIOR_MAX * interior.size:
            sides = (
                sub[:b].any(axis=0).mean(),
                sub[-b:].any(axis=0).mean(),
                sub[:, :b].any(axis=1).mean(),
                sub[:, -b:].any(axis=1).mean(),
            )
            if min(sides) >= OUTLINE_SIDE_MIN:
                return "outline"
    return "content"


def _delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| for uint8 arrays, without widening them."""
    return np.maximum(a, b) - np.minimum(a, b)


#: The colour bytes of an RGBA pixel read as one native uint32 (the alpha byte masked out).
_RGB_OF_RGBA = np.frombuffer(bytes([255, 255, 255, 0]), dtype=np.uint32)[0]


def _exceeds(a: np.ndarray, b: np.ndarray, tolerance: int) -> np.ndarray:
    """Per pixel, whether any colour channel differs by more than ``tolerance`` (0: differs at all).
    On (H, W, 4) RGBA arrays the per-byte result is read 4 bytes at a time with the alpha byte masked,
    a few contiguous passes instead of one strided pass per channel."""
    if a.shape[2] == 4:
        if tolerance <= 0:
            x = np.bitwise_xor(a.view(np.uint32)[..., 0], b.view(np.uint32)[..., 0])
        else:
            d = np.maximum(a, b)
            d -= np.minimum(a, b)  # |a - b|, in place
            x = np.greater(d, tolerance, out=d.view(bool)).view(np.uint32)[..., 0]
        x &= _RGB_OF_RGBA
        return x != 0
    hit = (a != b) if tolerance <= 0 else (_delta(a, b) > tolerance)
    if hit.shape[2] == 4:
        return (hit.view(np.uint32)[..., 0] & _RGB_OF_RGBA) != 0
    out = hit[..., 0].copy()
    for c in range(1, hit.shape[2]):
        out |= hit[..., c]
    return out


#: s // 3 for every sum of three channels (0-765).
_THIRD = (np.arange(766) // 3).astype(np.int16)


def _edges(rgb: np.ndarray) -> np.ndarray:
    s = rgb[..., 0].astype(np.int16)
    s += rgb[..., 1]
    s += rgb[..., 2]
    g = _THIRD[s]
    e = np.zeros(g.shape, dtype=bool)
    e[:, 1:] |= np.abs(np.diff(g, axis=1)) > EDGE_STEP
    e[1:, :] |= np.abs(np.diff(g, axis=0)) > EDGE_STEP
    return e


def grow(e: np.ndarray, r: int) -> np.ndarray:
    """Binary dilation by a (2r+1) x (2r+1) square, zero outside: rows then columns, by shifted ORs (the
    square is separable; same result as scipy.ndimage.binary_dilation with that structure)."""
    out = e.copy()
    for k in range(1, r + 1):
        out[:, k:] |= e[:, :-k]
        out[:, :-k] |= e[:, k:]
    rows = out.copy()
    for k in range(1, r + 1):
        out[k:] |= rows[:-k]
        out[:-k] |= rows[k:]
    return out


def is_restyle(pre: np.ndarray, post: np.ndarray) -> bool:
    """True when two crops show the same shapes in other colours: every edge of one lies
    within EDGE_SLACK px of an edge of the other (a hover or pressed style, not new content)."""
    ea, eb = _edges(pre), _edges(post)
    total = int(np.count_nonzero(ea)) + int(np.count_nonzero(eb))
    if total == 0:
        return True  # a flat recolour
    new = int(np.count_nonzero(eb & ~grow(ea, EDGE_SLACK)))
    lost = int(np.count_nonzero(ea & ~grow(eb, EDGE_SLACK)))
    return (new + lost) <= RESTYLE_EDGE_CHANGE_MAX * total


def _words(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Two C-contiguous same-shape frames as (H, words) arrays of the widest unsigned words that divide a
    row, and the word size in bytes."""
    h = a.shape[0]
    row_bytes = a.size // h if h else 0
    k = next(n for n in (8, 4, 2, 1) if row_bytes % n == 0)
    dt = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[k]
    return a.reshape(h, row_bytes).view(dt), b.reshape(h, row_bytes).view(dt), k


def changed_rows(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """The band of rows (top, bottom) outside which two C-contiguous same-shape frames are byte-equal;
    (0, 0) when they are equal. Rows are compared as 8-byte words."""
    wa, wb, _ = _words(a, b)
    rows = np.flatnonzero((wa != wb).any(axis=1))
    return (0, 0) if rows.size == 0 else (int(rows[0]), int(rows[-1]) + 1)


def _window(a: np.ndarray, b: np.ndarray, band: tuple[int, int] | None = None) -> tuple[int, int, int, int] | None:
    """The smallest box (top, bottom, left, right) outside which two same-shape frames are byte-equal,
    or None when they are equal. Rows are compared as 8-byte words (a tenth of the work of a per-channel
    comparison), so a small change costs a per-pixel comparison of its box only. ``band``: the frames'
    :func:`changed_rows`, when already known (the decoder found them comparing the frames)."""
    h, w = a.shape[:2]
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        return (0, h, 0, w) if not np.array_equal(a, b) else None
    ch = a.shape[2] if a.ndim == 3 else 1
    wa, wb, k = _words(a, b)
    if band is not None:
        top, bottom = band
        if top == bottom:
            return None
        ne = wa[top:bottom] != wb[top:bottom]
    else:
        ne = wa != wb
        rows = np.flatnonzero(ne.any(axis=1))
        if rows.size == 0:
            return None
        top, bottom = int(rows[0]), int(rows[-1]) + 1
        ne = ne[top:bottom]
    words = np.flatnonzero(ne.any(axis=0))
    left = int(words[0]) * k // ch
    right = -(-(int(words[-1]) + 1) * k // ch)
    return top, bottom, left, min(right, w)


def no_change(width: int, height: int, region: Box | None = None) -> ChangeMap:
    """The change map of a frame compared with itself."""
    gh, gw = _grid(height, width)
    return ChangeMap(width, height, 0, None, (), np.zeros((gh, gw), dtype=bool),
                     region_px=None if region is None else 0)


def diff_frames(a: np.ndarray, b: np.ndarray, tolerance: int = 0, region: Box | None = None,
                point: tuple[float, float] | None = None, band: tuple[int, int] | None = None) -> ChangeMap:
    """Compare two (H, W, 3) uint8 frames. A pixel changed when any channel differs by
    more than ``tolerance`` (0: any difference at all). With ``region``, also count the
    changed pixels inside that box. With ``point`` (the action point, frame pixels), a
    content blob that covers it and only recolours what was there is a ``restyle``.

    (H, W, 4) arrays are accepted too (RGBA as decoded, contiguous, which makes finding the changed box
    cheaper); their 4th channel is ignored. ``band``: :func:`changed_rows` of the two arrays, when the
    caller already has it (it then skips that scan)."""
    if a.shape[:2] == b.shape[:2] and a.shape != b.shape:  # RGB beside RGBA: compare the colour channels
        a, b = a[..., :3], b[..., :3]
    if a.shape[:2] != b.shape[:2]:
        h, w = b.shape[:2]
        gh, gw = _grid(h, w)
        rpx = None if region is None else (region[2] - region[0]) * (region[3] - region[1])
        return ChangeMap(w, h, h * w, Box(0, 0, w, h), (Blob(Box(0, 0, w, h), h * w, "content"),),
                         np.ones((gh, gw), dtype=bool), size_changed=True, region_px=rpx)
    h, w = a.shape[:2]
    gh, gw = _grid(h, w)
    win = _window(a, b, band if a.shape == b.shape else None)
    if win is None:
        return ChangeMap(w, h, 0, None, (), np.zeros((gh, gw), dtype=bool), region_px=None if region is None else 0)
    y0, y1, x0, x1 = win
    full_a, full_b = a, b  # RGBA when decoded so: per-pixel tests read 4 bytes at once (see _exceeds)
    sub = _exceeds(full_a[y0:y1, x0:x1], full_b[y0:y1, x0:x1], tolerance)
    changed = int(np.count_nonzero(sub))
    if changed == 0:
        return ChangeMap(w, h, 0, None, (), np.zeros((gh, gw), dtype=bool), region_px=None if region is None else 0)
    mask = np.zeros((h, w), dtype=bool)
    mask[y0:y1, x0:x1] = sub
    rpx = None if region is None else int(np.count_nonzero(mask[region[1]:region[3], region[0]:region[2]]))
    # changed cells, from the window's cells only (everything outside it is unchanged)
    cy0, cx0, cy1, cx1 = y0 // CELL, x0 // CELL, -(-y1 // CELL), -(-x1 // CELL)
    padded = np.zeros(((cy1 - cy0) * CELL, (cx1 - cx0) * CELL), dtype=bool)
    padded[y0 - cy0 * CELL: y1 - cy0 * CELL, x0 - cx0 * CELL: x1 - cx0 * CELL] = sub
    cells = np.zeros((gh, gw), dtype=bool)
    # CELL bools side by side are one CELL-byte word: a cell row-segment changed when its word is non-zero
    words = padded.view(np.uint64) != 0 if CELL == 8 else padded.reshape(padded.shape[0], -1, CELL).any(axis=2)
    cells[cy0:cy1, cx0:cx1] = words.reshape(cy1 - cy0, CELL, cx1 - cx0).any(axis=1)
    # groups of changed cells, labelled within the window's cells (everything outside is unchanged; the
    # raster order, and so the numbering, is the same as over the whole grid)
    sub_labels, n = components.label(cells[cy0:cy1, cx0:cx1])
    labels = np.zeros((gh, gw), dtype=sub_labels.dtype)
    labels[cy0:cy1, cx0:cx1] = sub_labels
    rows = np.flatnonzero(sub.any(axis=1))
    cols = np.flatnonzero(sub.any(axis=0))
    bbox = Box(x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)
    patches = tuple((slice(r.start + cy0, r.stop + cy0), slice(c.start + cx0, c.stop + cx0))
                    for r, c in components.boxes(sub_labels, n))
    blobs = [_blob(full_a, full_b, mask, labels, i, sl, n, point) for i, sl in enumerate(patches, start=1)]
    return ChangeMap(w, h, changed, bbox, tuple(blobs), cells, region_px=rpx)


def _blob(a: np.ndarray, b: np.ndarray, mask: np.ndarray, labels: np.ndarray, i: int, sl: tuple[slice, slice],
          n: int, point: tuple[float, float] | None) -> Blob:
    """Blob ``i`` of ``n`` (its cells' box ``sl``): its exact box, changed pixels and kind. ``a`` and ``b``
    are the whole frames (RGB, or RGBA whose 4th channel is ignored), ``mask`` their changed pixels."""
    h, w = mask.shape
    y0, y1 = sl[0].start * CELL, min(sl[0].stop * CELL, h)
    x0, x1 = sl[1].start * CELL, min(sl[1].stop * CELL, w)
    if n == 1:  # every changed pixel is this blob's
        sub = mask[y0:y1, x0:x1]
    else:
        own = np.repeat(np.repeat(labels[sl] == i, CELL, axis=0), CELL, axis=1)[: y1 - y0, : x1 - x0]
        sub = mask[y0:y1, x0:x1] & own
    r = np.flatnonzero(sub.any(axis=1))
    c = np.flatnonzero(sub.any(axis=0))
    tight = sub[r[0]: r[-1] + 1, c[0]: c[-1] + 1]
    tight_px = int(np.count_nonzero(tight))
    kind = _classify(tight) if n <= MAX_BLOBS else "content"
    box = Box(x0 + int(c[0]), y0 + int(r[0]), x0 + int(c[-1]) + 1, y0 + int(r[-1]) + 1)
    if kind == "content" and n <= MAX_BLOBS:
        left, t, rr, bb = box
        strong = _exceeds(a[t:bb, left:rr], b[t:bb, left:rr], NOISE_MAX_DELTA) & tight
        if not strong.any():
            kind = "noise"
        elif np.count_nonzero(strong) < tight_px:
            # Lossy frames (JPEG) smear faint noise around a real change: judge the shape of
            # what changed visibly (a focus ring stays a ring, a caret a caret).
            sr = np.flatnonzero(strong.any(axis=1))
            sc = np.flatnonzero(strong.any(axis=0))
            kind = _classify(strong[sr[0]: sr[-1] + 1, sc[0]: sc[-1] + 1])
    if kind == "content" and point is not None and _covers(box, point) \
            and (box[2] - box[0]) * (box[3] - box[1]) <= RESTYLE_MAX_AREA * w * h:
        left, t = max(box[0] - 1, 0), max(box[1] - 1, 0)
        rr, bb = min(box[2] + 1, w), min(box[3] + 1, h)
        if is_restyle(a[t:bb, left:rr, :3], b[t:bb, left:rr, :3]):
            kind = "restyle"
    return Blob(box, tight_px, kind)


def _covers(box: Box, point: tuple[float, float]) -> bool:
    m = RESTYLE_POINT_MARGIN
    return box[0] - m <= point[0] < box[2] + m and box[1] - m <= point[1] < box[3] + m


def boxes_intersect(p: Box, q: Box) -> bool:
    return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]
