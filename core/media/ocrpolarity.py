"""Text of both polarities in one crop (issue 51, item 4: error text on dark pages).

:func:`trajcheck.media.ocr.prepare` reads a crop as dark text on a light ground, inverting it when it is dark on
average. A crop that holds both grounds (a dark page with a white field or card in the changed region) has one
polarity for its mean, and the text on the other ground is read inverted: Tesseract reads light text on a dark
ground poorly or not at all (a 12 px "Error: email is invalid" in light red between two white fields was not
read; "Incorrect password" lost its first letters). Such a crop is read in its mean's polarity, as before, and
its other ground is read again in that ground's own polarity (a dark ground inverted, with the crop's light fills
painted over); the lines of the second read that add to the first are merged in (:func:`merge`): no line of the
first read is lost unless a longer line read over it replaces it. A crop of one ground is read once, as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analyzers.screentext import MIN_LINE_CONFIDENCE, TextLine
from ..base.box import Box

#: Grey levels under this are a dark ground, over :data:`LIGHT` a light one (Pillow's L conversion).
DARK = 96
LIGHT = 160
#: The least share of a crop's pixels on each ground for it to be read in both polarities: a line of text and its
#: padding on the other ground (a white field in a dark form, the dark page around a light card).
MIXED_SHARE = 0.2


def mixed(grey: np.ndarray) -> bool:
    """Does the crop hold both a dark and a light ground, each over :data:`MIXED_SHARE` of it?"""
    if grey.size == 0:
        return False
    return float((grey < DARK).mean()) >= MIXED_SHARE and float((grey > LIGHT).mean()) >= MIXED_SHARE


def on_dark(grey: np.ndarray, box: Box, line: TextLine) -> bool:
    """Is ``line`` (its box in frame pixels) set on a dark ground: the median grey under its box, in the crop of
    ``box``, is under the middle of the grey scale?"""
    x0, y0 = max(0, line.box.left - box.left), max(0, line.box.top - box.top)
    x1, y1 = max(x0 + 1, line.box.right - box.left), max(y0 + 1, line.box.bottom - box.top)
    under = grey[y0:y1, x0:x1]
    return bool(under.size) and float(np.median(under)) < 128


#: Cells of this many pixels a side tell a light element's fill (a cell all lighter than :data:`LIGHT`) from light
#: text (whose strokes leave dark pixels in every cell they cross).
FILL_CELL = 4


def dark_only(grey: np.ndarray) -> np.ndarray:
    """The crop with its light fills (fields, cards, buttons: :data:`FILL_CELL` cells all lighter than
    :data:`LIGHT`, and one cell around them, their borders) painted in the dark ground's median grey: read
    inverted, the text on the dark ground is then alone on a light page (a black field beside it makes Tesseract
    take the area for a picture and skip the small text)."""
    c = FILL_CELL
    h, w = grey.shape[0] // c, grey.shape[1] // c
    if h == 0 or w == 0:
        return grey
    fill = grey[:h * c, :w * c].reshape(h, c, w, c).min(axis=(1, 3)) > LIGHT
    grown = fill.copy()
    grown[1:] |= fill[:-1]
    grown[:-1] |= fill[1:]
    grown[:, 1:] |= grown[:, :-1].copy()
    grown[:, :-1] |= grown[:, 1:].copy()
    mask = np.zeros(grey.shape, dtype=bool)
    mask[:h * c, :w * c] = grown.repeat(c, 0).repeat(c, 1)
    dark = grey[grey < DARK]
    out = grey.copy()
    out[mask] = int(np.median(dark)) if dark.size else 0
    return out


def _overlaps(a: Box, b: Box) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def merge(base: list[TextLine], extra: list[TextLine]) -> list[TextLine]:
    """``base`` (the read of the crop's own polarity, as before) with the lines of ``extra`` (the other polarity's
    read, on its ground) that it adds: a line that overlaps no line of ``base``, or that holds more characters than
    the lines it overlaps (read whole where ``base`` lost its start), which it then replaces; then in reading order
(top, then left)."""
    kept = list(base)
    for x in extra:
        under = [y for y in kept if _overlaps(x.box, y.box)]
        if not under or len(x.text.strip()) > sum(len(y.text.strip()) for y in under):
            kept = [y for y in kept if y not in under] + [x]
    if kept == base:
        return base  # nothing added: the first read as it was, in Tesseract's order
    return sorted(kept, key=lambda x: (x.box.top, x.box.left))


def read_both(read: Any, grey: np.ndarray, box: Box) -> list[TextLine]:
    """The lines of a crop (``grey``, the crop of ``box``), read in the polarity its mean gives (as a crop of one
    ground is) and, when the crop is :func:`mixed`, in the other too: its dark ground read inverted with its light
    fills painted over (:func:`dark_only`), or its light ground read plain; the second read's lines on its own
    ground, read with :data:`MIN_LINE_CONFIDENCE` or more, are merged in (:func:`merge`). ``read(pixels,
    invert)``: the lines of ``pixels`` (the crop itself when None) read with its grey levels inverted or not."""
    inverted = bool(grey.mean() < 128)
    first = read(None, inverted)
    if not mixed(grey):
        return first
    if inverted:
        extra = [x for x in read(None, False) if not on_dark(grey, box, x)]
    else:
        extra = [x for x in read(dark_only(grey), True) if on_dark(grey, box, x)]
    return merge(first, [x for x in extra if x.confidence >= MIN_LINE_CONFIDENCE])
