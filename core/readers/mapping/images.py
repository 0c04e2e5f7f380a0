"""A mapping's ``[run] images``: a map of id -> image somewhere in the log, whose ids the steps name as their
screenshots::

    [run]
    images = "images"                                   # {"3f2a...": "data:image/jpeg;base64,...", ...}

    [step]
    screenshot = "uiContext.screenshot.id"              # the screen before the step: an id of the map
    screenshot_after = "recorder[0].screenshot.id"      # the screen after it

A step's ``screenshot`` (or ``screenshot_after``) value that is a key of the map stands for the map's value: a
data: URL, base64, or a path inside the run folder; any other value is read as without the map. Only the images
a step names are decoded (each once, however many steps name it), each within the inline frame size limit
(:data:`~trajcheck.readers.kit.screenshots.MAX_FRAME_BYTES`); the log itself is bounded by ``MAX_LOG_BYTES``.
"""

from __future__ import annotations

from typing import Any

from ..kit.reading import Frames

#: Longest id looked up in the map (an id is short; a longer value is an image or a path itself).
MAX_ID_CHARS = 4096
#: Most values of one step looked at for the ids it names (a bounded walk).
MAX_WALK = 5000


class ImageMap:
    """``[run] images`` of one log: ``frame`` gives a step's screenshot value as a frame, ``named`` counts the
    map's images the steps name."""

    def __init__(self, value: Any):
        self.map: dict[str, Any] = value if isinstance(value, dict) else {}
        self._frames: dict[str, str | None] = {}

    def image(self, shot: str) -> str | None:
        """The image the map holds under ``shot`` (a string), or None when ``shot`` is not one of its ids."""
        img = self.map.get(shot) if len(shot) <= MAX_ID_CHARS else None
        return img if isinstance(img, str) and img else None

    def frame(self, shot: str, frames: Frames, field: str, folder: str) -> str | None:
        """A step's screenshot value as a frame: an id of the map is its image (decoded once), any other value a
        path (relative to ``folder``, a step file's), base64 or a data: URL, as without the map."""
        img = self.image(shot)
        if img is None:
            if folder and not shot.startswith(("/", "data:")) and len(shot) < MAX_ID_CHARS:
                shot = folder + shot  # relative to its step file
            return frames.from_any(shot, field)
        if shot not in self._frames:
            self._frames[shot] = frames.from_any(img, field)
        return self._frames[shot]

    def named(self, steps: list[Any]) -> int:
        """How many of the map's images the steps name: the distinct ids found among their string values (a
        bounded walk of each step), whichever fields the mapping reads."""
        if not self.map:
            return 0
        ids: set[str] = set()
        for value in steps:
            todo, seen = [value], 0
            while todo and seen < MAX_WALK:
                v = todo.pop()
                seen += 1
                if isinstance(v, dict):
                    todo.extend(v.values())
                elif isinstance(v, list):
                    todo.extend(v)
                elif isinstance(v, str) and self.image(v) is not None:
                    ids.add(v)
        return len(ids)
