"""Decoding screenshots once and deriving every image signal from that one decode."""

from __future__ import annotations

import io
import threading
import warnings
import weakref
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..analyzers.pixeldiff import changed_rows

from ..base.box import Box
from ..base.hashing import Hash64
from ..base.resample import HASH_INPUT, column_pass, pass_order, resize_gray, row_pass
from ..base.inputs import NotRegularFile, read_regular
from ..base.problems import Slug

try:  # the "fast" extra: Wuffs decodes a screenshot PNG 3-4x faster than libspng, same pixels
    from pywuffs import ImageDecoderType as _WuffsType
    from pywuffs import PixelFormat as _WuffsFormat
    from pywuffs.aux import ImageDecoder as _WuffsDecoder
    from pywuffs.aux import ImageDecoderConfig as _WuffsConfig
except ImportError:  # pragma: no cover - libspng or Pillow decode everything without it
    _WuffsDecoder = None
try:  # libspng: about 2/3 of Pillow's decode time, same pixels
    import pyspng as _spng
except ImportError:  # pragma: no cover - Pillow decodes everything without it
    _spng = None

#: Image formats a run may reference.
ALLOWED_FORMATS = ("PNG", "JPEG", "WEBP")
#: Side of the square region hashed around the action point, in frame pixels (the seed's 200x200).
REGION_SIZE = 200
#: Byte budget of one frame unpacked from an archive (a Playwright trace's screencast member), counted on
#: the bytes the decompressor actually produces. Sized from the largest screen a frame may show: a 4K
#: screen (3840x2160) stored with no compression at all, as RGBA, is 33,177,600 bytes, and no PNG, JPEG or
#: WebP of it is larger (PNG's stored blocks add 5 bytes in 65,535); real screencast frames are 20-200 KB.
#: A member that would unpack past it is refused (``frame_too_large``) after at most this many bytes.
MAX_FRAME_BYTES = 32 * 1024 * 1024


class FrameError(Exception):
    """A frame file exists but cannot be used; ``slug`` says why."""

    def __init__(self, slug: Slug, message: str):
        super().__init__(message)
        self.slug = slug


def read_frame_file(path: Path) -> bytes:
    """The bytes of a frame file; :class:`FrameError` ``not_a_regular_file`` for a FIFO, a socket or a
    device, which is never opened (reading a FIFO blocks forever)."""
    try:
        return read_regular(path)
    except NotRegularFile as exc:
        raise FrameError(Slug.NOT_A_REGULAR_FILE, str(exc)) from None


@dataclass
class Frame:
    """One decoded screenshot: the grayscale image that pHash reads and the RGB pixels the
    exact diff reads. Lives only while some step still needs it."""

    path: Path
    format: str
    width: int
    height: int
    gray: Image.Image
    rgb: np.ndarray  # (H, W, 3) uint8 (may be a view of ``px``)
    phash: Hash64
    luma: np.ndarray  # (H, W) uint8: the pixels of ``gray``
    px: np.ndarray  # (H, W, 3 or 4) uint8, C-contiguous: what the diff compares (a 4th channel is ignored)
    #: The row pass of the pHash resize, (H, 32) float64, when it was taken row-first: a frame decoded next
    #: with most rows equal to this one's redoes only the rows that differ (see :func:`decode`).
    rows: np.ndarray | None = None
    #: When decoded ``like`` another frame: that frame (weakly held) and the band of rows (top, bottom)
    #: outside which the two frames' pixels are byte-equal; the pixel diff of the pair starts from it.
    like: "weakref.ref[Frame] | None" = None
    band: tuple[int, int] | None = None

    #: Region hashes computed so far, by box (a step's post frame is the next step's pre frame).
    regions: dict[Box, Hash64] = field(default_factory=dict, repr=False, compare=False)
    #: The 32x32 grayscale image the pHash is computed from (1,024 bytes, row-major): what the run's states
    #: are told apart by (:mod:`trajcheck.analyzers.states`).
    thumb: bytes | None = field(default=None, repr=False, compare=False)

    def region_hash(self, box: Box) -> Hash64:
        """pHash of the crop ``box`` (left, top, right, bottom); equals
        ``imagehash.phash(Image.open(path).crop(box))``. A box whose rows lie outside the band where this
        frame differs from the frame it was decoded like has that frame's pixels, so it has its hash."""
        got = self.regions.get(box)
        if got is not None:
            return got
        left, top, right, bottom = box
        src = self  # follow the frames decoded like one another while the box is outside their bands
        inside = 0 <= top < bottom <= self.height  # rows as given, not counted from the end by numpy
        while inside and src.band is not None and src.like is not None and (bottom <= src.band[0]
                                                                             or top >= src.band[1]):
            like = src.like()
            if like is None:
                break
            src = like
        got = src.regions.get(box)
        if got is None:
            got = src.regions[box] = Hash64.of_gray(src.luma[top:bottom, left:right])
        self.regions[box] = got
        return got


def decode(path: Path, data: bytes | None = None, like: Frame | None = None) -> Frame:
    """Decode ``path`` (or ``data``, an image carried inline under that name) once. Refuses decompression
    bombs (over ``Image.MAX_IMAGE_PIXELS``, checked from the header before any pixel is decoded) and
    formats other than PNG, JPEG and WebP. 8-bit PNGs are decoded by Wuffs (pywuffs, the "fast" extra)
    or libspng (pyspng) when installed: the same pixels as Pillow's decoder, in a fraction of the time.
    The header is read by Pillow first, so its decompression-bomb guard applies to every decoder.

    ``like``: a frame decoded before (the previous screenshot of the run). Where both are colour frames of
    one size, only the band of rows where their pixels differ is converted to gray and resized for the
    pHash; the other rows are taken from ``like`` (every gray pixel and every resized row depends on its
    own row only, so the result is the same bytes and bits)."""
    try:
        raw = data if data is not None else read_frame_file(path)  # FrameError passes through
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw), formats=ALLOWED_FORMATS) as img:
                fmt = img.format or "?"
                pixels = _fast_png(raw) if fmt == "PNG" and img.mode in ("RGB", "RGBA", "L") else None
                if pixels is not None and pixels.ndim == 3:
                    frame = _colour_frame(path, fmt, pixels, like)
                    if frame is not None:
                        return frame
                    gray = _gray(pixels)
                    rgb, px = pixels[..., :3], pixels
                elif pixels is not None:
                    gray = Image.fromarray(pixels)
                    rgb = px = np.repeat(pixels[..., None], 3, axis=2)
                else:
                    img.load()
                    gray = img.convert("L")
                    rgb = px = np.asarray(img if img.mode == "RGB" else img.convert("RGB"))
    except FileNotFoundError:
        raise FrameError(Slug.FRAMES_MISSING, "file not found") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise FrameError(Slug.FRAME_TOO_LARGE, f"image is too large to decode safely ({exc})") from None
    except UnidentifiedImageError:
        raise FrameError(Slug.FRAME_UNREADABLE, "not a PNG, JPEG or WebP image") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise FrameError(Slug.FRAME_UNREADABLE, f"image data is corrupt or truncated ({exc})") from None
    h, w = rgb.shape[:2]
    if w == 0 or h == 0:
        raise FrameError(Slug.FRAME_UNREADABLE, "image has no pixels")
    luma = _pixels_of(gray)
    phash, thumb = _hash_and_thumb(luma)
    return Frame(path=path, format=fmt, width=w, height=h, gray=gray, rgb=rgb, phash=phash, luma=luma, px=px,
                 thumb=thumb)


def _hash_and_thumb(luma: np.ndarray) -> tuple[Hash64, bytes]:
    """The pHash of ``luma`` and the 32x32 resize it is computed from (the resize Pillow would make where
    trajcheck's own does not match the installed Pillow, which then also hashes)."""
    order = pass_order(luma.shape[1], luma.shape[0])
    if order is None:
        small = np.asarray(Image.fromarray(luma).resize((HASH_INPUT, HASH_INPUT), Image.Resampling.LANCZOS))
        return Hash64.of_gray(luma), small.tobytes()
    small = resize_gray(luma, order=order)
    return Hash64.of_resized(small), small.tobytes()


def _gray(rgba: np.ndarray) -> Image.Image:
    """Pillow's L conversion of RGBA pixels (imagehash converts the image as stored to L: Pillow's RGB(A) to
    L conversion of the same pixels gives the same bytes, so the hash stays bit-identical). Decoded as
    RGBA, the pixels go to Pillow without a copy (an RGB array would be copied to RGBX first)."""
    return Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba, "raw", "RGBA", 0, 1).convert("L")


def _colour_frame(path: Path, fmt: str, pixels: np.ndarray, like: Frame | None) -> Frame | None:
    """The frame of RGBA ``pixels`` whose pHash resize is taken row-first (None: the caller's general path);
    with ``like`` of the same size, gray pixels and resized rows are redone only in the band of rows
    that differ."""
    h, w = pixels.shape[:2]
    if w == 0 or h == 0 or pass_order(w, h) != "h":
        return None
    band = None
    if like is not None and like.rows is not None and like.px.shape == pixels.shape and like.px.flags.c_contiguous:
        band = changed_rows(like.px, pixels)
    if band is None:
        gray = _gray(pixels)
        luma = _pixels_of(gray)
        rows = row_pass(luma)
    elif band[0] == band[1]:  # the same pixels in other bytes: everything derived is the same
        assert like is not None and like.rows is not None
        gray, luma, rows = like.gray, like.luma, like.rows
    else:
        assert like is not None and like.rows is not None
        top, bottom = band
        luma = like.luma.copy()
        luma[top:bottom] = _pixels_of(_gray(pixels[top:bottom]))
        luma.setflags(write=False)
        gray = Image.frombuffer("L", (w, h), luma, "raw", "L", 0, 1)
        rows = like.rows.copy()
        rows[top:bottom] = row_pass(luma[top:bottom])
        rows.setflags(write=False)
    small = column_pass(rows)
    return Frame(path=path, format=fmt, width=w, height=h, gray=gray, rgb=pixels[..., :3],
                 phash=Hash64.of_resized(small), luma=luma, px=pixels, rows=rows,
                 like=None if band is None else weakref.ref(like), band=band,  # type: ignore[arg-type]
                 thumb=small.tobytes())


def from_array(pixels: np.ndarray, path: Path = Path("<array>")) -> Frame:
    """A frame from pixels already decoded: (H, W) grayscale, (H, W, 3) RGB or (H, W, 4) RGBA, uint8 (the
    live verifier's frames from a runner's memory). The same Frame, and so the same hashes, as decoding an
    image file of those pixels."""
    a = np.ascontiguousarray(pixels)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (3, 4)):
        raise TypeError(f"{path}: pixels must be a uint8 array of shape (H, W), (H, W, 3) or (H, W, 4), "
                        f"not {a.dtype} {a.shape}")
    h, w = a.shape[:2]
    if w == 0 or h == 0:
        raise FrameError(Slug.FRAME_UNREADABLE, "image has no pixels")
    if Image.MAX_IMAGE_PIXELS and w * h > 2 * Image.MAX_IMAGE_PIXELS:
        raise FrameError(Slug.FRAME_TOO_LARGE, f"{w}x{h} is over twice Pillow's MAX_IMAGE_PIXELS")
    if a.ndim == 2:
        gray = Image.fromarray(a)
        rgb = px = np.repeat(a[..., None], 3, axis=2)
    elif a.shape[2] == 4:
        gray = Image.frombuffer("RGBA", (w, h), a, "raw", "RGBA", 0, 1).convert("L")
        rgb, px = a[..., :3], a
    else:
        gray = Image.fromarray(a, "RGB").convert("L")
        rgb = px = a
    luma = _pixels_of(gray)
    phash, thumb = _hash_and_thumb(luma)
    return Frame(path=path, format="array", width=w, height=h, gray=gray, rgb=rgb, phash=phash, luma=luma, px=px,
                 thumb=thumb)


def _pixels_of(gray: Image.Image) -> np.ndarray:
    """The (H, W) uint8 pixels of an "L" image: without a copy through Pillow's Arrow export (Pillow >= 11.2,
    pyarrow), else copied by ``np.asarray``. Read-only either way. The C capsules are imported directly:
    ``pa.array(image)`` and ``Array.to_numpy`` would import pandas (0.27 s in every worker process)."""
    w, h = gray.size
    try:
        import pyarrow as pa

        arr = pa.Array._import_from_c_capsule(*gray.__arrow_c_array__())
        if arr.null_count or len(arr) != w * h:
            raise ValueError("unexpected Arrow layout")
        return np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=w * h, offset=arr.offset).reshape(h, w)
    except Exception:  # noqa: BLE001  (no Arrow export, or rows not in one block: copy)
        return np.asarray(gray)


def _fast_png(raw: bytes) -> np.ndarray | None:
    """8-bit pixels of a PNG the header already vetted (RGBA for colour images, L for gray), from Wuffs
    when every chunk's CRC checks out, else from libspng; None to fall back to Pillow (another bit
    depth or colour type, or neither decoder takes it: Pillow then reports the error as before)."""
    if len(raw) < 26 or raw[12:16] != b"IHDR":
        return None
    depth, colour = raw[24], raw[25]
    if depth != 8 or colour not in (0, 2, 6):  # 8-bit gray, RGB, RGBA only: the pixels Pillow gives unchanged
        return None
    arr = _wuffs_png(raw, colour)
    if arr is None and _spng is not None:
        try:
            arr = _spng.load(raw, "L" if colour == 0 else "RGBA")
        except Exception:  # noqa: BLE001  (libspng refuses it: let Pillow decode it and report the error)
            return None
    if arr is None or arr.dtype != np.uint8 or not arr.flags.c_contiguous:
        return None
    return arr


_wuffs_local = threading.local()  # one decoder per thread (a Dask worker may run tasks on threads)


def _wuffs_png(raw: bytes, colour: int) -> np.ndarray | None:
    """Wuffs' decode of an 8-bit gray/RGB/RGBA PNG, or None. Wuffs is used only on a file whose chunks
    are all whole with a matching CRC-32, ending in IEND, and without tRNS (a transparent colour key
    would become alpha): anything else goes to libspng or Pillow, whose verdicts on damaged files
    trajcheck reports. On valid files the pixels are the same (PNG is lossless; the pHash identity test
    and the benchmark compare hashes)."""
    if _WuffsDecoder is None or not _chunks_intact(raw):
        return None
    decoders = getattr(_wuffs_local, "decoders", None)
    if decoders is None:
        decoders = _wuffs_local.decoders = {}
    fmt = _WuffsFormat.Y if colour == 0 else _WuffsFormat.RGBA_NONPREMUL
    dec = decoders.get(fmt)
    if dec is None:
        cfg = _WuffsConfig()
        cfg.enabled_decoders = [_WuffsType.PNG]
        cfg.pixel_format = fmt
        dec = decoders[fmt] = _WuffsDecoder(cfg)
    try:
        res = dec.decode(raw)
    except Exception:  # noqa: BLE001  (refused: the next decoder decides)
        return None
    if res.error_message:
        return None
    arr = res.pixbuf
    w, h = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    want = (h, w) if colour == 0 else (h, w, 4)
    if arr.ndim == 3 and colour == 0 and arr.shape[2] == 1:
        arr = arr.reshape(h, w)
    if arr.shape != want:
        return None
    return arr


def _chunks_intact(raw: bytes) -> bool:
    """True when ``raw`` is the PNG signature then whole chunks, each with a matching CRC-32, the last one
    IEND, and no tRNS chunk. About 15 us for a 40 KB screenshot."""
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, end = 8, len(raw)
    view = memoryview(raw)
    while pos + 12 <= end:
        length = int.from_bytes(raw[pos:pos + 4], "big")
        stop = pos + 8 + length
        if stop + 4 > end:
            return False
        kind = raw[pos + 4:pos + 8]
        if kind == b"tRNS" or zlib.crc32(view[pos + 4:stop]) != int.from_bytes(raw[stop:stop + 4], "big"):
            return False
        if kind == b"IEND":
            return stop + 4 == end
        pos = stop + 4
    return False


def region_box(x: float, y: float, width: int, height: int, size: int = REGION_SIZE) -> Box | None:
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
    return Box(left, top, left + w, top + h)


def to_frame(x: float, y: float, screen: tuple[int | None, int | None],
             frame: tuple[int, int]) -> tuple[float, float, float, float]:
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
