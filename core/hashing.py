"""The 64-bit perceptual hash as a small value object."""

from __future__ import annotations

from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image


#: The first 8 rows of the 32-point DCT-II matrix in scipy.fftpack's (unnormalized) convention:
#: y[k] = 2 * sum_n x[n] cos(pi k (2n + 1) / 64). ``_DCT8 @ P @ _DCT8.T`` is the 8x8 block of
#: ``dct(dct(P, axis=0), axis=1)`` that pHash reads, without loading scipy's FFT (0.15-0.25 s at start-up).
_DCT8 = 2.0 * np.cos(np.pi * np.arange(8)[:, None] * (2 * np.arange(32)[None, :] + 1) / 64)
#: Relative distance to the median under which a bit is decided by scipy's DCT instead: the two products
#: and pocketfft differ by about 1e-15 relative; 1e-9 leaves a margin of a million.
_NEAR = 1e-9


def _flat_bits(pixels: np.ndarray, low: np.ndarray, tol: float) -> np.ndarray | None:
    """The bits of a block whose coefficients sit at the median because the 32x32 pixels are flat along an
    axis (a blank area, a horizontal rule, a column of the same colour), decided without scipy; None when
    the structure does not decide them.

    scipy's DCT-II (pocketfft) of a vector of equal values gives exactly 0.0 for every coefficient but the
    first (its first butterflies subtract equal numbers): when every row of the pixels is one value, every
    coefficient past the first column is exactly 0.0; when every column is, every one past the first row.
    Those are then exact, and when they are the middle of the 64 (the median is 0.0 exactly) and every other
    coefficient is clearly away from 0, each bit is known: ``0.0 > 0.0`` is False, the others by their sign.
    tests/test_phash_identity.py checks this against imagehash on flat, striped and stepped images."""
    exact = np.zeros(low.shape, dtype=bool)
    if bool(np.all(pixels == pixels[:, :1])):  # every row one value
        exact[:, 1:] = True
    if bool(np.all(pixels == pixels[:1, :])):  # every column one value
        exact[1:, :] = True
    rest = low[~exact]
    if not exact.any() or (rest.size and float(np.abs(rest).min()) <= tol):
        return None
    below = int((rest < 0).sum())
    if below >= 32 or below + int(exact.sum()) < 33:  # the median is not two of the exact zeros
        return None
    return np.where(exact, False, low > 0)


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
        from .resample import pass_order, resize_gray

        h, w = gray.shape
        order = pass_order(w, h)
        if order is None:
            return cls.from_bits(imagehash.phash(Image.fromarray(gray)).hash)
        pixels = resize_gray(gray, order=order)
        low = _DCT8 @ pixels @ _DCT8.T  # the 8x8 low-frequency block of the 2-D DCT-II, as two products
        med = np.median(low)
        tol = _NEAR * (1.0 + float(np.abs(low).max()))
        if float(np.abs(low - med).min()) > tol:
            return cls.from_bits(low > med)
        bits = _flat_bits(pixels, low, tol)
        if bits is not None:
            return cls.from_bits(bits)
        # a coefficient within rounding of the median: its bit depends on the last digits, so take them
        # from imagehash's own DCT (scipy.fftpack), as imagehash.phash would
        import scipy.fftpack

        low = scipy.fftpack.dct(scipy.fftpack.dct(pixels, axis=0), axis=1)[:8, :8]
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
