"""``trajcheck score`` with every crop's top-left corner blanked before Tesseract reads it: the bound of issue 39's
OCR cost on the benchmark corpus (``benchmarks/measure_screen_text.py``, its last arm), not a way to score.

    python benchmarks/masked_score.py RUNS --out LEDGER [any other score option]

The corpus's copies of one sample run differ only by a block painted in the top-left corner of every frame
(``benchmarks/corpus.py``). Blanking that corner in each prepared crop before it is read makes a whole screen of
one copy the same crop as in every other copy, so it is read once for the batch and served to the others by
its pixels (``trajcheck.media.ocr._content_lines``, in memory and on disk): what scoring would cost if every
screen a batch repeats, whatever else differs, were read once and reused for free. What is read is not what
trajcheck reads (the corner is not read), so the ledger it writes is for timing only.
"""

from __future__ import annotations

import sys

import numpy as np

from trajcheck.media import ocr

#: The corner blanked, in prepared-crop pixels: the corpus's block (16 px) at up to twice its size (a region
#: read at twice its CSS size).
CORNER = 32


def main() -> int:
    real = ocr._content_lines

    def masked(eng: ocr.OcrEngine, gray: np.ndarray) -> list:
        blank = np.array(gray)
        blank[:CORNER, :CORNER] = 255
        return real(eng, blank)

    ocr._content_lines = masked  # type: ignore[assignment]
    from trajcheck.cli.main import main as cli

    sys.argv = ["trajcheck", "score", *sys.argv[1:]]
    return int(cli() or 0)


if __name__ == "__main__":
    raise SystemExit(main())
