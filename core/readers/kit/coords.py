"""Which space a log's action points are in, decided from what the log declares, then from the data.

A point can be in pixels of the screen the harness drove (``screen``), pixels of the screenshot the
model saw (``screenshot``), UI-TARS's relative grid (``relative-1000``: 0-1000 across the screen), or
pixels of the image Qwen2.5-VL models are given (``smart-resize``: the screenshot resized to multiples
of 28 within a pixel budget, UI-TARS 1.5's convention). A reader gives :func:`decide` what its log
declares, its format's default and the points; the run records the space chosen and how
(``runs.coord_space``, ``runs.coord_space_source``). Where several spaces fit every point equally,
the default is kept and a ``coord_space_ambiguous`` warning says so: it is never a silent guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ...base.errors import Problem
from ...base.problems import Slug

SPACES = ("screen", "screenshot", "relative-1000", "smart-resize")

#: UI-TARS's own smart_resize constants (bytedance/UI-TARS codes/ui_tars/action_parser.py).
IMAGE_FACTOR = 28
MIN_PIXELS = 100 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28


def smart_resize(height: int, width: int, factor: int = IMAGE_FACTOR, min_pixels: int = MIN_PIXELS,
                 max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """(height, width) of the image a Qwen2.5-VL model sees for a ``height`` x ``width`` screenshot: each side
    rounded to a multiple of ``factor``, scaled to stay within [min_pixels, max_pixels]."""
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = math.floor(height / beta / factor) * factor
        w = math.floor(width / beta / factor) * factor
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


#: The sizes Anthropic's reference computer-use loop scales a larger screen to, keeping its aspect ratio
#: (anthropics/claude-quickstarts computer-use-demo tools/computer.py, MAX_SCALING_TARGETS).
SCALING_TARGETS = ((1024, 768), (1280, 800), (1366, 768))


def scaling_target(shot: tuple[int, int] | None) -> tuple[int, int] | None:
    """The display the reference loop gives the model for a ``shot``-sized screen: the first target whose aspect
    ratio is within 0.02 of the screen's, when it is smaller than the screen; None otherwise."""
    if shot is None or shot[1] <= 0:
        return None
    ratio = shot[0] / shot[1]
    for w, h in SCALING_TARGETS:
        if abs(w / h - ratio) < 0.02:
            return (w, h) if w < shot[0] else None
    return None


@dataclass(frozen=True)
class Space:
    """The space chosen: its ``name``, ``how`` it was decided (``declared``, ``default``, ``data: ...``,
    ``ambiguous: ...``), the run's ``screen`` after conversion (the space of the stored points; None: frame
    pixels) and the ``scale`` that takes a logged point to it. ``usable`` is False when the points cannot be
    placed (a relative point with no size to scale it to)."""

    name: str
    how: str
    screen: tuple[int, int] | None
    scale: tuple[float, float] = (1.0, 1.0)
    usable: bool = True

    def convert(self, x: float | None, y: float | None) -> tuple[float | None, float | None]:
        """A logged point in the run's screen space (rounded to 0.1 px); None, None when not usable."""
        if x is None or y is None or not self.usable:
            return None, None
        return round(x * self.scale[0], 1), round(y * self.scale[1], 1)


def make_space(name: str, how: str, screen: tuple[int, int] | None, shot: tuple[int, int] | None) -> Space:
    size = screen or shot
    if name == "screen":
        return Space(name, how, screen or shot)
    if name == "screenshot":
        return Space(name, how, shot)
    if name == "relative-1000":
        if size is None:
            return Space(name, how, None, usable=False)
        return Space(name, how, size, (size[0] / 1000, size[1] / 1000))
    if shot is None:  # smart-resize is relative to the screenshot the model was given
        return Space(name, how, None, usable=False)
    h, w = smart_resize(shot[1], shot[0])
    return Space(name, how, shot, (shot[0] / w, shot[1] / h))


def _bounds(name: str, screen: tuple[int, int] | None, shot: tuple[int, int] | None) -> tuple[float, float] | None:
    """The largest point a space allows (None: the space cannot apply to this run)."""
    if name == "relative-1000":
        return (1000.0, 1000.0)
    if name == "screen":
        return (float(screen[0]), float(screen[1])) if screen else None
    if shot is None:
        return None
    if name == "screenshot":
        return (float(shot[0]), float(shot[1]))
    h, w = smart_resize(shot[1], shot[0])
    return (float(w), float(h))


def decide(points: Iterable[tuple[float, float]], *, default: str, candidates: tuple[str, ...],
           declared: str | None = None, screen: tuple[int, int] | None = None,
           shot: tuple[int, int] | None = None, run: str = "", file: str = "") -> tuple[Space, list[Problem]]:
    """The space of a run's ``points``: ``declared`` when the log says (how ``declared``); else the one of
    ``candidates`` that fits every point (``data``: a point beyond 1000 rules out the relative grid, one
    beyond the screen rules out the screen); else, when several fit and place the points differently,
    ``default`` with a ``coord_space_ambiguous`` warning; when none fits, ``default``. ``screen`` is the
    screen size the log declares, ``shot`` the first screenshot's size."""
    if declared in SPACES:
        return make_space(declared, "declared", screen, shot), []
    pts = list(points)
    if not pts:
        return make_space(default, "default", screen, shot), []
    mx, my = max(p[0] for p in pts), max(p[1] for p in pts)
    fits = []
    for name in candidates:
        b = _bounds(name, screen, shot)
        if b is not None and mx <= b[0] and my <= b[1] and make_space(name, "", screen, shot).usable:
            fits.append(name)
    # spaces that place every point at the same pixel (a screenshot as large as the screen) are one answer
    distinct: list[str] = []
    for name in fits:
        s = make_space(name, "", screen, shot)
        if not any(_same(s, make_space(d, "", screen, shot)) for d in distinct):
            distinct.append(name)
    if len(distinct) == 1:
        ruled_out = [c for c in candidates if c not in fits]
        why = f"only {distinct[0]} fits every point (largest {mx:g}, {my:g})"
        return make_space(distinct[0], f"data: {why}" + (f"; not {', '.join(ruled_out)}" if ruled_out else ""),
                      screen, shot), []
    if not distinct:
        none = Problem(Slug.COORD_SPACE_AMBIGUOUS, f"no coordinate space fits every point (largest {mx:g}, {my:g}); "
                       f"{default} is used, and the points beyond it are outside the frame", run=run, file=file,
                       field="coordinates", severity="warning",
                       hint="declare the coordinate space (or the screen size) in the log")
        return make_space(default, f"default: no space fits every point (largest {mx:g}, {my:g})", screen, shot), [none]
    chosen = default if default in fits else distinct[0]
    how = f"ambiguous: {', '.join(distinct)} all fit every point; {chosen} (the format's default) is used"
    return make_space(chosen, how, screen, shot), [Problem(
        Slug.COORD_SPACE_AMBIGUOUS, f"the log does not say which space its points are in, and {', '.join(distinct)} "
        f"all fit every point (largest {mx:g}, {my:g}); {chosen} is used", run=run, file=file, field="coordinates",
        severity="warning", hint="declare the coordinate space (or the screen size) in the log, or read it with a "
        "--mapping file")]


def _same(a: Space, b: Space) -> bool:
    """Two spaces that put every point within 1% of the same place on the same screen."""
    if a.screen is None or b.screen is None:
        return a.screen == b.screen and a.scale == b.scale
    ax, ay = a.scale[0] / a.screen[0], a.scale[1] / a.screen[1]
    bx, by = b.scale[0] / b.screen[0], b.scale[1] / b.screen[1]
    return abs(ax - bx) <= 0.01 * max(ax, bx) and abs(ay - by) <= 0.01 * max(ay, by)
