"""The 64-bit perceptual hash as a small value object."""

from __future__ import annotations

from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image


@dataclass(frozen=True, order=True)
class Hash64:
    """A 64-bit pHash. Prints as 16 hex digits; ``a - b`` is the Hamming distance.

    The bit order is imagehash's (row-major over the 8x8 DCT block), so
    ``str(Hash64.of(img)) == str(imagehash.phash(img))``.
    """

    value: int

    @classmethod
    def of(cls, image: Image.Image) -> "Hash64":
        """pHash of a PIL image, bit-identical to ``imagehash.phash(image)``."""
        return cls.from_bits(imagehash.phash(image).hash)

    @classmethod
    def from_bits(cls, bits: np.ndarray) -> "Hash64":
        v = 0
        for b in np.asarray(bits, dtype=bool).flatten():
            v = (v << 1) | int(b)
        return cls(v)

    @classmethod
    def from_hex(cls, text: str) -> "Hash64":
        if len(text) != 16:
            raise ValueError(f"a 64-bit hash is 16 hex digits, got {text!r}")
        return cls(int(text, 16))

    def __sub__(self, other: "Hash64") -> int:
        return (self.value ^ other.value).bit_count()

    def __str__(self) -> str:
        return f"{self.value:016x}"

    def __repr__(self) -> str:
        return f"Hash64('{self}')"
