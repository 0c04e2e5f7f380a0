"""Where a step's action was on its frames, for the report's drawings: the action point in frame pixels, a
drag's start and a scroll's direction (:mod:`trajcheck.render.htmlreport` draws them)."""

from __future__ import annotations

import json
from typing import Any


def frame_point(s: dict[str, Any], screen: tuple[Any, Any]) -> tuple[float, float] | None:
    """The action point in frame pixels (the run's screen coordinates scaled to the frame, as the verifier
    scales them), or None."""
    x, y, fw, fh = s["action_x"], s["action_y"], s["frame_width"], s["frame_height"]
    if x is None or y is None:
        return None
    sw, sh = screen
    if sw and sh and fw and fh:
        return x * fw / sw, y * fh / sh
    return float(x), float(y)


_DIRECTIONS = {"down": (0, 1), "up": (0, -1), "left": (-1, 0), "right": (1, 0)}


def motion(s: dict[str, Any], screen: tuple[Any, Any]) -> tuple[tuple[float, float] | None,
                                                                   tuple[float, float] | None]:
    """A DRAG's start point (frame pixels) and a SCROLL's direction (a unit vector), where recorded."""
    try:
        extra = json.loads(s["action_extra"]) if s.get("action_extra") else {}
    except ValueError:
        return None, None
    if not isinstance(extra, dict):
        return None, None
    if s["action_type"] == "DRAG" and isinstance(extra.get("start"), list) and len(extra["start"]) == 2 \
            and all(isinstance(v, (int, float)) for v in extra["start"]):
        start = frame_point({**s, "action_x": extra["start"][0], "action_y": extra["start"][1]}, screen)
        return start, None
    if s["action_type"] == "SCROLL":
        d = extra.get("direction")
        if d in _DIRECTIONS:
            return None, _DIRECTIONS[d]
        dy, dx = extra.get("dy"), extra.get("dx") or extra.get("scroll_x")
        dy = dy if dy is not None else extra.get("scroll_y")
        if isinstance(dy, (int, float)) and dy:
            return None, (0, 1 if dy > 0 else -1)
        if isinstance(dx, (int, float)) and dx:
            return None, (1 if dx > 0 else -1, 0)
    return None, None
