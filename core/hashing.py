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
        if image.mode == "L":
            return cls.of_gray(np.asarray(image))
        return cls.from_bits(imagehash.phash(image).hash)

    @classmethod
    def of_gray(cls, gray: np.ndarray) -> "Hash64":
        """pHash of a 2-D uint8 grayscale array (Pillow's "L" pixels), bit-identical to
        ``imagehash.phash(Image.fromarray(gray))``: the 32x32 LANCZOS resize by
        :func:`trajcheck.resample.resize_gray` where it matches the installed Pillow (else by Pillow),
        then imagehash's DCT, median and comparison on the same uint8 pixels."""
        import scipy.fftpack

        from .resample import pass_order, resize_gray

        h, w = gray.shape
        order = pass_order(w, h)
        if order is None:
            return cls.from_bits(imagehash.phash(Image.fromarray(gray)).hash)
        pixels = resize_gray(gray, order=order)
        dct = scipy.fftpack.dct(scipy.fftpack.dct(pixels, axis=0), axis=1)
        low = dct[:8, :8]
        return cls.from_bits(low > np.median(low))

    @classmethod
    def from_bits(cls, bits: np.ndarray) -> "Hash64":
        """From imagehash's 8x8 boolean array, row-major, first bit most significant."""
        return cls(int.from_bytes(np.packbits(np.asarray(bits, dtype=bool).ravel()).tobytes(), "big"))

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
