"""One box type for every rectangle in trajcheck, in one convention.

``Box(left, top, right, bottom)`` in frame pixels, right and bottom exclusive: a NumPy slice is
``a[top:bottom, left:right]`` and Pillow's ``crop`` takes it as is. Files people write (contracts'
``region`` and ``box``, ``judge_regions``) say ``[x, y, width, height]``; they become a Box with
:meth:`Box.from_xywh` where they are read, and nowhere else.
"""

from __future__ import annotations

from typing import NamedTuple


class Box(NamedTuple):
    left: int
    top: int
    right: int
    bottom: int

    @classmethod
    def from_xywh(cls, x: int, y: int, w: int, h: int) -> "Box":
        return cls(x, y, x + w, y + h)

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def inside(self, width: int, height: int) -> bool:
        """Does the box lie within a ``width`` x ``height`` frame and hold at least one pixel?"""
        return 0 <= self.left < self.right <= width and 0 <= self.top < self.bottom <= height
