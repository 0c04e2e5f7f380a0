"""Issue 31 (first part): reading the screen. The text of every message the sample runs' DOM snapshots show is
read back from the frame the recorder took with it, light and dark themes alike (trajcheck.media.ocr)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from PIL import Image

from trajcheck.media import ocr
from trajcheck.analyzers.messages import message_elements
from trajcheck.analyzers.skeleton import parse

from conftest import SAMPLES

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _messages() -> list[tuple[str, str, np.ndarray, float]]:
    """(run, DOM text, the message's crop of the post frame, device scale) for each boxed message the sample
    runs' post-action DOM snapshots show, first appearance per run."""
    out = []
    for run in sorted(p for p in SAMPLES.iterdir() if (p / "run.json").is_file()):
        meta = json.loads((run / "run.json").read_text())
        scale = float((meta.get("recorder") or {}).get("device_scale_factor") or 1)
        seen: set[str] = set()
        for line in (run / "steps.jsonl").read_text().splitlines():
            step = json.loads(line)
            dom, frame = (step.get("page") or {}).get("dom_after"), (step.get("frames") or {}).get("post")
            if not dom or not frame:
                continue
            pixels = np.asarray(Image.open(run / frame).convert("RGB"))
            for node, text, kind in message_elements(parse((run / dom).read_text())):
                box = (node.attributes.get("data-bbox") or "").split()
                if kind is None or len(box) != 4 or text in seen:
                    continue
                seen.add(text)
                x, y, w, h = (float(v) * scale for v in box)
                m = 8 * scale
                crop = pixels[max(0, int(y - m)):int(y + h + m), max(0, int(x - m)):int(x + w + m)]
                if crop.shape[0] > 8 and crop.shape[1] > 8:
                    out.append((run.name, text, crop, scale))
    return out


def test_prepare_turns_a_dark_crop_light_and_scales_text_to_twice_its_css_size():
    dark = np.full((20, 40, 3), 30, dtype=np.uint8)
    img = ocr.prepare(dark, scale=1.0)
    assert img.mode == "L" and img.size == (80, 40) and np.asarray(img).mean() > 200
    assert ocr.prepare(np.full((20, 40), 250, dtype=np.uint8), scale=2.0).size == (40, 20)  # HiDPI: as it is


@pytest.mark.slow
@needs_ocr
def test_every_boxed_message_is_read_back_from_its_frame():
    found = _messages()
    runs = {r for r, *_ in found}
    assert len(found) >= 10 and "dark-faint-and-toast" in runs  # the dark theme is among them
    missed = []
    for run, text, crop, scale in found:
        read = _norm(" ".join(ENGINE.read(crop, scale)))
        if _norm(text) not in read:
            missed.append((run, text, read))
    assert not missed, missed


def test_without_the_engine_nothing_is_read_and_the_reason_is_given(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_tesserocr(name, *a, **k):
        if name == "tesserocr":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_tesserocr)
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setattr(ocr, "_missing", None)
    assert ocr.engine() == (None, "tesserocr is not installed (pip install 'trajcheck[ocr]')")


@pytest.mark.parametrize("frame_width, screen_width, scale", [
    (1280, 1024, 1.25),  # a 1024x768 display captured at 1280 pixels: read at 1.25, not rounded to 1.0
    (2560, 1280, 2.0), (1280, 1280, 1.0), (1920, 1280, 1.5), (1366, 1024, 1.33),
    (640, 1280, 0.5), (100, 1280, 0.5), (20000, 1280, 4.0),  # bounded both ways
    (1280, None, 1.0), (1280, 0, 1.0),  # no declared screen: the frame's own pixels
])
def test_a_frame_is_read_at_its_true_scale_to_the_declared_screen(frame_width, screen_width, scale):
    from types import SimpleNamespace

    from trajcheck.media.screenread import ScreenPlan

    got = ScreenPlan.scale(SimpleNamespace(screen_width=screen_width), SimpleNamespace(width=frame_width))
    assert got == scale


@pytest.mark.slow
@needs_ocr
def test_messages_of_a_frame_captured_at_1_25_are_read_at_that_scale():
    """Every boxed message, its crop enlarged by 1.25 as a 1024-wide display captured at 1280 pixels shows it, is
    read back, every word of it, when the crop is read at the scale the frame has (1.25)."""
    missed, seen = [], 0
    for run, text, crop, scale in _messages():
        if scale != 1:
            continue
        seen += 1
        img = Image.fromarray(crop).resize((round(crop.shape[1] * 1.25), round(crop.shape[0] * 1.25)),
                                           Image.Resampling.LANCZOS)
        read = _norm(" ".join(ENGINE.read(np.asarray(img), 1.25))).split()
        if [w for w in _norm(text).split() if w not in read]:
            missed.append((run, text, read))
    assert seen >= 10 and not missed, missed
