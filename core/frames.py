"""Decoding screenshots once and deriving every image signal from that one decode."""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from .hashing import Hash64

try:  # optional accelerator (the "fast" extra): libspng decodes PNG faster than Pillow, same pixels
    import pyspng as _spng
except ImportError:  # pragma: no cover - Pillow decodes everything without it
    _spng = None

#: Image formats a run may reference.
ALLOWED_FORMATS = ("PNG", "JPEG", "WEBP")
#: Side of the square region hashed around the action point, in frame pixels (the seed's 200x200).
REGION_SIZE = 200


class FrameError(Exception):
    """A frame file exists but cannot be used; ``slug`` says why."""

    def __init__(self, slug: str, message: str):
        super().__init__(message)
        self.slug = slug


@dataclass
class Frame:
    """One decoded screenshot: the grayscale image that pHash reads and the RGB pixels the
    exact diff reads. Lives only while some step still needs it."""

    path: Path
    format: str
    width: int
    height: int
    gray: Image.Image
    rgb: np.ndarray  # (H, W, 3) uint8
    phash: Hash64

    def region_hash(self, box: tuple[int, int, int, int]) -> Hash64:
        """pHash of the crop ``box`` = (left, top, right, bottom); equals
        ``imagehash.phash(Image.open(path).crop(box))``."""
        return Hash64.of(self.gray.crop(box))


def decode(path: Path, data: bytes | None = None) -> Frame:
    """Decode ``path`` (or ``data``, an image carried inline under that name) once. Refuses decompression
    bombs (over ``Image.MAX_IMAGE_PIXELS``, checked from the header before any pixel is decoded) and
    formats other than PNG, JPEG and WebP. 8-bit PNGs are decoded by pyspng (libspng) when it is
    installed: the same pixels as Pillow's decoder, in about two thirds of the time."""
    try:
        raw = data if data is not None else path.read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw), formats=ALLOWED_FORMATS) as img:
                fmt = img.format or "?"
                pixels = _fast_png(raw) if fmt == "PNG" and img.mode in ("RGB", "RGBA", "L") else None
                if pixels is not None:
                    # imagehash converts the image as stored to L; Pillow's conversion of the same
                    # pixels gives the same bytes, so the hash stays bit-identical.
                    gray = Image.fromarray(pixels).convert("L") if pixels.ndim == 3 else Image.fromarray(pixels)
                    rgb = pixels[..., :3] if pixels.ndim == 3 else np.repeat(pixels[..., None], 3, axis=2)
                else:
                    img.load()
                    gray = img.convert("L")
                    rgb = np.asarray(img if img.mode == "RGB" else img.convert("RGB"))
    except FileNotFoundError:
        raise FrameError("frames_missing", "file not found") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise FrameError("frame_too_large", f"image is too large to decode safely ({exc})") from None
    except UnidentifiedImageError:
        raise FrameError("frame_unreadable", "not a PNG, JPEG or WebP image") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise FrameError("frame_unreadable", f"image data is corrupt or truncated ({exc})") from None
    h, w = rgb.shape[:2]
    if w == 0 or h == 0:
        raise FrameError("frame_unreadable", "image has no pixels")
    return Frame(path=path, format=fmt, width=w, height=h, gray=gray, rgb=rgb, phash=Hash64.of(gray))


def _fast_png(raw: bytes) -> np.ndarray | None:
    """8-bit pixels of a PNG the header already vetted, from libspng; None to fall back to Pillow."""
    if _spng is None:
        return None
    try:
        arr = _spng.load(raw)
    except Exception:  # noqa: BLE001  (libspng refuses it: let Pillow decode it and report the error)
        return None
    if arr.dtype != np.uint8 or arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)):
        return None
    return arr


def region_box(x: float, y: float, width: int, height: int, size: int = REGION_SIZE) -> tuple[int, int, int, int] | None:
    """The ``size`` x ``size`` box centred on (x, y) in a ``width`` x ``height`` frame.

    Near a border the box is shifted inward so it keeps its full size (a click in a
    corner is still compared over 200x200 pixels); a frame smaller than ``size`` in a
    dimension is taken whole in that dimension. A point outside the frame has no box.
    """
    if not in_frame(x, y, (width, height)):
        return None
    w = min(size, width)
    h = min(size, height)
    left = int(round(x)) - w // 2
    top = int(round(y)) - h // 2
    left = max(0, min(left, width - w))
    top = max(0, min(top, height - h))
    return (left, top, left + w, top + h)


def to_frame(x: float, y: float, screen: tuple[int | None, int | None], frame: tuple[int, int]) -> tuple[float, float, float, float]:
    """Map a point from screen coordinates to frame pixels: (fx, fy, scale_x, scale_y).

    Frames larger than the screen (a 2x device scale) scale the point up; with no
    recorded screen size the point is taken as frame pixels.
    """
    sw, sh = screen
    sx = frame[0] / sw if sw else 1.0
    sy = frame[1] / sh if sh else 1.0
    return float(x) * sx, float(y) * sy, sx, sy


def in_frame(fx: float, fy: float, frame: tuple[int, int]) -> bool:
    return 0 <= fx < frame[0] and 0 <= fy < frame[1]
