"""A thumbnail or crop on a report page, with what the step did drawn over it as SVG.

The image files carry no drawing (:mod:`trajcheck.media.thumbs`: one file per frame content, shared by every
step and page that shows it); each step's marks are an SVG laid over its image whose ``viewBox`` is the
frame's own pixel grid (the whole frame for a thumbnail, the crop's box for a crop), so the marks are placed
in frame pixels exactly as the verifier placed them: where the action aimed (a magenta ring with a
crosshair), a drag's path, a scroll's direction, the region the verifier hashed (blue) and the changed box
(red). Sizes are in frame pixels per page pixel (``k``), so a ring stays about 7 page pixels across whatever
the scale. Every number is formatted here; no text from a run reaches the SVG.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

#: The action point's mark, the region box and the changed box (as the thumbnails drew them before).
MARK, REGION, CHANGED = (230, 0, 200), (0, 110, 255), (255, 0, 0)

Point = tuple[float, float]


@dataclass(frozen=True)
class Marks:
    """What to draw over one image, in frame pixels."""

    box: Sequence[int] | None = None  # the region the verifier hashed
    highlight: Sequence[int] | None = None  # the changed box
    point: Point | None = None  # where the action aimed
    path: Point | None = None  # a drag's start
    arrow: Point | None = None  # a scroll's direction (a unit vector)


def _rgb(c: tuple[int, int, int]) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def _n(v: float) -> str:
    return f"{float(v):.1f}".rstrip("0").rstrip(".")


def svg(m: Marks, view: Sequence[int], k: float) -> str:
    """The SVG over an image showing the frame pixels ``view`` = [left, top, right, bottom]; ``k`` frame pixels
    per image pixel. Empty when there is nothing to draw."""
    parts: list[str] = []
    lw = _n(max(2.0, 2 * k))
    for b, colour in ((m.box, REGION), (m.highlight, CHANGED)):
        if b:
            parts.append(f'<rect x="{_n(b[0])}" y="{_n(b[1])}" width="{_n(b[2] - b[0])}" height="{_n(b[3] - b[1])}" '
                         f'fill="none" stroke="{_rgb(colour)}" stroke-width="{lw}"/>')
    p = m.point
    if p is not None:
        thick = _n(max(2.0, 3 * k))
        if m.path is not None:
            parts.append(_line(m.path, p, thick))
        if m.arrow is not None:
            ax, ay = m.arrow
            end = (p[0] + ax * 40 * k, p[1] + ay * 40 * k)
            hx, hy = -ay * 8 * k, ax * 8 * k  # the head: a bar across the arrow's end
            parts.append(_line(p, end, thick) + _line((end[0] - hx, end[1] - hy), (end[0] + hx, end[1] + hy), thick))
        r = 7 * k
        parts.append(f'<circle cx="{_n(p[0])}" cy="{_n(p[1])}" r="{_n(r)}" fill="none" stroke="{_rgb(MARK)}" '
                     f'stroke-width="{lw}"/>' + _line((p[0] - 2 * r, p[1]), (p[0] + 2 * r, p[1]), lw)
                     + _line((p[0], p[1] - 2 * r), (p[0], p[1] + 2 * r), lw))
    if not parts:
        return ""
    x0, y0, x1, y1 = view
    return (f'<svg class="marks" viewBox="{_n(x0)} {_n(y0)} {_n(x1 - x0)} {_n(y1 - y0)}" preserveAspectRatio="none" '
            f'aria-hidden="true">{"".join(parts)}</svg>')


def _line(a: Point, b: Point, width: str) -> str:
    return (f'<line x1="{_n(a[0])}" y1="{_n(a[1])}" x2="{_n(b[0])}" y2="{_n(b[1])}" stroke="{_rgb(MARK)}" '
            f'stroke-width="{width}"/>')


def shot(src: str, size: tuple[int, int], alt: str, marks: Marks, view: Sequence[int], k: float) -> str:
    """An image (``src`` relative to the page, ``size`` its pixels) with ``marks`` over it."""
    return (f'<span class=shot><img src="{html.escape(src, quote=True)}" width={size[0]} height={size[1]} '
            f'alt="{html.escape(alt, quote=True)}" loading="lazy">{svg(marks, view, k)}</span>')
