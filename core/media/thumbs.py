"""Thumbnails and region crops of frames for the report: made once per frame content, cached on disk.

A thumbnail is the frame reduced by a whole factor (about :data:`TARGET_WIDTH` pixels wide) by the cheapest
route Pillow has: a JPEG is decoded at 1/2, 1/4 or 1/8 of its size (``Image.draft``, the DCT scaled), a PNG
by Wuffs or libspng where installed (:func:`trajcheck.media.frames._fast_png`), then ``Image.reduce`` (a box
filter: each thumbnail pixel the mean of a whole block of frame pixels) and a WebP at quality
:data:`WEBP_QUALITY`, encoder method 0 (a 320x200 screenshot in 2-4 KB). benchmarks/bench_report.py prints the
stages on frames across its corpus: decode 4.5-6.1 ms, reduce 2.2-2.4 ms, WebP 1.9-2.0 ms per frame (the report
used to spend about 20 ms per frame in a full-size LANCZOS resize, and decoded each frame again for the pHash).

The score stage does not keep thumbnails of the frames it decodes: that would spare the report only the
decode (about half a thumbnail's cost), and add the reduce, the encode and a cache file (4-5 ms a frame) to
every score, most of which are never reported; the report alone already takes about the time of a cold score
(report/score 1.02 at 28 runs, 0.88 at 1,000).

Nothing is drawn on them: the report draws the action point and the boxes as SVG over the image
(:mod:`trajcheck.render.marks`), so one thumbnail serves every step, run page, pair page and report that
shows the frame. A crop (the 200x200 region of a high-risk step, the lines OCR read) is cut from the
full-size frame and kept as PNG (every pixel, for a change of a few pixels to show).

The cache is keyed by the frame's content (the blake2b hash scoring records for each file in the ledger's
``inputs`` column, or the hash of the bytes read) and by :data:`RECIPE`: ``thumbs-<RECIPE>/<2 hex>/<hash>``
``.<W>x<H>.webp`` (W x H the frame's size, which the drawing over it needs) and ``<hash>.c<box>.png`` under
trajcheck's cache folder (:func:`trajcheck.base.diskcache.cache_dir`). Files are written atomically and
private (0600), read back only from a regular file this user owns and nobody else can write; anything wrong
with the cache means the thumbnail is made again.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from ..base.atomic import atomic_write
from ..base.box import Box
from ..base.diskcache import cache_dir
from .frames import ALLOWED_FORMATS, FrameError, _fast_png, read_frame_file
from ..base.problems import Slug

#: About how wide a thumbnail is: the frame is reduced by the whole factor nearest its width / this.
TARGET_WIDTH = 320
WEBP_QUALITY = 80
#: The recipe's name in the cache: a new recipe never reads an old one's files.
RECIPE = "v1"
#: The largest cached file read back (a thumbnail is a few KB; a crop of a 4K frame's OCR lines under 1 MB).
MAX_BYTES = 8 << 20
_THUMB_NAME = re.compile(r"^([0-9a-f]{32})\.(\d{1,5})x(\d{1,5})\.webp$")


def factor(width: int) -> int:
    """The whole factor a frame ``width`` pixels wide is reduced by."""
    return max(1, round(width / TARGET_WIDTH))


def thumb_size(width: int, height: int) -> tuple[int, int]:
    """The size of the thumbnail of a ``width`` x ``height`` frame (``Image.reduce`` rounds up)."""
    f = factor(width)
    return -(-width // f), -(-height // f)


def content_hash(data: bytes) -> str:
    """The hash scoring records for a file (:mod:`trajcheck.scoring.digest`): blake2b, 16 bytes, hex."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def thumb_name(digest: str, width: int, height: int) -> str:
    return f"{digest}.{width}x{height}.webp"


def crop_name(digest: str, box: Box | list[int] | tuple[int, ...]) -> str:
    return f"{digest}.c{'_'.join(str(int(v)) for v in box)}.png".replace("-", "m")


def parse_thumb_name(name: str) -> tuple[str, int, int] | None:
    """(hash, frame width, frame height) of a thumbnail's file name, or None."""
    m = _THUMB_NAME.match(name)
    return None if m is None else (m.group(1), int(m.group(2)), int(m.group(3)))


@dataclass
class Made:
    """What :func:`make` made of one frame: the thumbnail's name and bytes, and each crop's."""

    digest: str
    thumb: tuple[str, bytes] | None = None
    crops: dict[str, bytes] = field(default_factory=dict)


def _open(raw: bytes) -> Image.Image:
    """The image of ``raw``, header read (PNG, JPEG or WebP only; a decompression bomb refused before any pixel
    is decoded, as :func:`trajcheck.media.frames.decode` refuses it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return Image.open(io.BytesIO(raw), formats=ALLOWED_FORMATS)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise FrameError(Slug.FRAME_TOO_LARGE, f"image is too large to decode safely ({exc})") from None
        except (OSError, SyntaxError, ValueError) as exc:
            raise FrameError(Slug.FRAME_UNREADABLE, f"not a PNG, JPEG or WebP image ({exc})") from None


def _full(img: Image.Image, raw: bytes) -> Image.Image:
    """The whole frame as RGB or RGBX (the fourth byte ignored): Wuffs or libspng for an 8-bit PNG, else Pillow."""
    if img.format == "PNG" and img.mode in ("RGB", "RGBA"):
        px = _fast_png(raw)
        if px is not None and px.ndim == 3 and px.shape[2] == 4:
            return Image.frombuffer("RGBX", (px.shape[1], px.shape[0]), px, "raw", "RGBX", 0, 1)
    img.load()
    return img if img.mode in ("RGB", "RGBX") else img.convert("RGB")


def _reduced(img: Image.Image, raw: bytes, whole: Image.Image | None) -> Image.Image:
    """The thumbnail's pixels: ``whole`` (already decoded for a crop) or the frame decoded as small as its format
    allows, reduced by :func:`factor`."""
    w, h = img.size
    f = factor(w)
    want = thumb_size(w, h)
    src = whole
    if src is None and img.format == "JPEG" and f > 1:
        s = next(s for s in (8, 4, 2, 1) if f % s == 0)  # DCT scaling, then a whole reduce of what is left
        if s > 1:
            img.draft("RGB", (w // s, h // s))
            if img.size == (-(-w // s), -(-h // s)):
                img.load()
                src, f = img, f // s
    if src is None:
        src, f = _full(img, raw), factor(w)
    small = src.reduce(f) if f > 1 else src
    if small.size != want:  # a decoder that scaled otherwise: the size the page's drawing expects
        small = small.resize(want, Image.Resampling.BOX)
    return small if small.mode == "RGB" else small.convert("RGB")


def make(raw: bytes, digest: str | None = None, thumb: bool = True, crops: tuple[Box, ...] = ()) -> Made:
    """Decode ``raw`` once and make its thumbnail (with ``thumb``) and each crop in ``crops`` (frame pixels; a
    box past the frame's edge is filled with black, as Pillow crops it). :class:`FrameError` when the image
    cannot be used."""
    made = Made(digest or content_hash(raw))
    try:
        img = _open(raw)
        w, h = img.size
        if w == 0 or h == 0:
            raise FrameError(Slug.FRAME_UNREADABLE, "image has no pixels")
        whole = _full(img, raw) if crops else None
        for box in crops:
            buf = io.BytesIO()
            part = whole.crop((box[0], box[1], box[2], box[3])) if whole is not None else None
            if part is not None:
                (part if part.mode == "RGB" else part.convert("RGB")).save(buf, "PNG", compress_level=6)
                made.crops[crop_name(made.digest, box)] = buf.getvalue()
        if thumb:
            buf = io.BytesIO()
            _reduced(img, raw, whole).save(buf, "WEBP", quality=WEBP_QUALITY, method=0)
            made.thumb = (thumb_name(made.digest, w, h), buf.getvalue())
    except FrameError:
        raise
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise FrameError(Slug.FRAME_UNREADABLE, f"image data is corrupt or truncated ({exc})") from None
    return made


def make_file(path: Path, thumb: bool = True, crops: tuple[Box, ...] = ()) -> Made:
    """:func:`make` of a frame file (never a FIFO or device: :func:`trajcheck.media.frames.read_frame_file`)."""
    try:
        raw = read_frame_file(path)
    except FileNotFoundError:
        raise FrameError(Slug.FRAMES_MISSING, "file not found") from None
    except OSError as exc:
        raise FrameError(Slug.FRAME_UNREADABLE, str(exc)) from None
    return make(raw, None, thumb, crops)


class Cache:
    """The thumbnails and crops kept under the cache folder (None: caching turned off)."""

    def __init__(self) -> None:
        base = cache_dir()
        self.root = None if base is None else base / f"thumbs-{RECIPE}"
        self._listed: dict[str, dict[str, str]] = {}
        self._made: set[Path] = set()

    def _folder(self, digest: str) -> Path | None:
        return None if self.root is None else self.root / digest[:2]

    def thumb(self, digest: str) -> str | None:
        """The cached thumbnail's name for frame content ``digest``, or None."""
        folder = self._folder(digest)
        if folder is None:
            return None
        listed = self._listed.get(digest[:2])
        if listed is None:
            listed = {}
            try:
                for e in os.scandir(folder):
                    got = parse_thumb_name(e.name)
                    if got is not None:
                        listed[got[0]] = e.name
            except OSError:
                pass
            self._listed[digest[:2]] = listed
        return listed.get(digest)

    def read(self, name: str) -> bytes | None:
        """A cached file's bytes: only from a regular file this user owns and nobody else can write; else None."""
        folder = self._folder(name)
        getuid = getattr(os, "getuid", None)
        nofollow = getattr(os, "O_NOFOLLOW", None)
        if folder is None or getuid is None or nofollow is None:
            return None
        try:
            fd = os.open(folder / name, os.O_RDONLY | nofollow)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_uid != getuid() or st.st_mode & 0o022 \
                        or st.st_size > MAX_BYTES:
                    return None
                return f.read(MAX_BYTES + 1)
        except OSError:
            return None

    def write(self, name: str, data: bytes) -> None:
        """Keep ``data`` as ``name``; a cache that cannot be written is only not used."""
        folder = self._folder(name)
        if folder is None:
            return
        try:
            if folder not in self._made:
                folder.mkdir(parents=True, exist_ok=True)
                self._made.add(folder)
            with atomic_write(folder / name, "wb", hidden=True, private=True) as f:
                f.write(data)
        except OSError:
            return
        got = parse_thumb_name(name)
        if got is not None and name[:2] in self._listed:
            self._listed[name[:2]][got[0]] = name

