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


def _median(block: np.ndarray) -> float:
    """``np.median`` of an 8x8 block, as numpy computes it for an even count (the mean of the two middle
    values: their sum over 2), without its NaN check, which imports ``numpy.ma`` (0.02 s) on first use."""
    ordered = np.sort(block, axis=None)
    mid = ordered.size // 2
    return float((ordered[mid - 1] + ordered[mid]) / 2.0)


def _column_zeros(pixels: np.ndarray) -> np.ndarray:
    """(8, width) mask: coefficient k (< 8) of column j's DCT-II is exactly 0.0 in scipy's DCT (pocketfft).

    pocketfft's DCT-II pairs x[n] with x[N-1-n] before anything else, so it gives exactly 0.0 where the exact
    transform is 0 by symmetry: past the first coefficient of a constant vector; at odd k of a mirror-
    symmetric vector; at even k >= 2 of a vector whose mirrored pairs have one sum."""
    const = np.all(pixels == pixels[:1, :], axis=0)
    mirror = pixels[::-1, :]
    sym = np.all(pixels == mirror, axis=0)
    pair_sum = pixels.astype(np.int32) + mirror.astype(np.int32)
    anti = np.all(pair_sum == pair_sum[:1, :], axis=0)
    k = np.arange(8)[:, None]
    return ((k >= 1) & const) | ((k % 2 == 1) & sym) | ((k >= 2) & (k % 2 == 0) & anti)


def _exact_zeros(pixels: np.ndarray) -> np.ndarray:
    """(8, 8) mask of the coefficients that imagehash's DCT (columns first, then rows) gives as exactly 0.0.

    A coefficient of the first pass is exactly 0.0 by :func:`_column_zeros`, and two columns with the same
    pixels give bitwise the same coefficients; a row of the first pass is then constant, or mirror-symmetric,
    when its entries are, and the second pass gives exactly 0.0 by the same rules (a row of exact zeros:
    everywhere)."""
    zero = _column_zeros(pixels)
    _, ids = np.unique(pixels.T, axis=0, return_inverse=True)  # columns with the same pixels share an id
    keys = np.where(zero, -1, ids.reshape(-1)[None, :])
    col = np.arange(8)[None, :]
    all_zero = np.all(keys == -1, axis=1)[:, None]
    const = np.all(keys == keys[:, :1], axis=1)[:, None]
    sym = np.all(keys == keys[:, ::-1], axis=1)[:, None]
    return all_zero | (const & (col >= 1)) | (sym & (col % 2 == 1))


def _exact_bits(pixels: np.ndarray, low: np.ndarray, tol: float) -> np.ndarray | None:
    """The bits of a block with coefficients at the median because the 32x32 pixels are flat or mirror-
    symmetric along an axis (a blank area, a horizontal rule, a centred band), decided without scipy; None
    when the structure does not decide them.

    The coefficients :func:`_exact_zeros` finds are exactly 0.0 in imagehash's own DCT too. When two of
    them are the middle of the 64 (the median is exactly 0.0) and every other coefficient is clearly away
    from 0, each bit is known: ``0.0 > 0.0`` is False, the others by their sign. tests/test_phash_identity.py
    checks this against imagehash on flat, banded, striped and mirrored images."""
    exact = _exact_zeros(pixels)
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
        :func:`trajcheck.base.resample.resize_gray` where it matches the installed Pillow (else by Pillow),
        then imagehash's DCT, median and comparison on the same uint8 pixels."""
        from .resample import pass_order, resize_gray

        h, w = gray.shape
        order = pass_order(w, h)
        if order is None:
            return cls.from_bits(imagehash.phash(Image.fromarray(gray)).hash)
        return cls.of_resized(resize_gray(gray, order=order))

    @classmethod
    def of_resized(cls, pixels: np.ndarray) -> "Hash64":
        """pHash of the 32x32 uint8 image the LANCZOS resize gave (:meth:`of_gray` after its resize)."""
        low = _DCT8 @ pixels @ _DCT8.T  # the 8x8 low-frequency block of the 2-D DCT-II, as two products
        med = _median(low)
        tol = _NEAR * (1.0 + float(np.abs(low).max()))
        if float(np.abs(low - med).min()) > tol:
            return cls.from_bits(low > med)
        bits = _exact_bits(pixels, low, tol)
        if bits is not None:
            return cls.from_bits(bits)
        # a coefficient within rounding of the median: its bit depends on the last digits, so take them
        # from imagehash's own DCT (scipy.fftpack), as imagehash.phash would
        import scipy.fftpack

        low = scipy.fftpack.dct(scipy.fftpack.dct(pixels, axis=0), axis=1)[:8, :8]
        return cls.from_bits(low > _median(low))

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
