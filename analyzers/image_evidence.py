"""What the frames of one step say (pure data): the loading stage computes it from one decode of each frame, the
perceptual verifier (:mod:`~trajcheck.analyzers.perceptual`) and ambient learning
(:mod:`~trajcheck.analyzers.ambient`) read it. A module of its own, below both (the verifier imports ambient).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.box import Box
from ..base.hashing import Hash64

from .pixeldiff import ChangeMap


@dataclass(frozen=True)
class ImageEvidence:
    """What the frames of one step say, computed from one decode of each frame."""

    pre_hash: Hash64 | None = None
    post_hash: Hash64 | None = None
    region: Box | None = None  # crop box in frame pixels, None without a usable point
    pre_region_hash: Hash64 | None = None
    post_region_hash: Hash64 | None = None
    change: ChangeMap | None = None
    problem: str | None = None  # frames_missing | frame_unreadable | frame_too_large
    point: str = "none"  # "in_frame" | "outside_frame" | "none"
    pre_thumb: bytes | None = None  # the frames' 32x32 grayscale thumbnails (what states are told apart by)
    post_thumb: bytes | None = None

    @property
    def global_distance(self) -> int | None:
        if self.pre_hash is None or self.post_hash is None:
            return None
        return self.post_hash - self.pre_hash

    @property
    def region_distance(self) -> int | None:
        if self.pre_region_hash is None or self.post_region_hash is None:
            return None
        return self.post_region_hash - self.pre_region_hash
