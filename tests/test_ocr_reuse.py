"""Issue 39 (what reading the screen costs): a crop is read once. Its read is kept by the crop's prepared pixels,
in the process and on disk, so the message, button or dialog that recurs across the steps and runs of a batch
is not read again, wherever it sits on the screen, and what is served is what Tesseract reads. The read starts
from the frame's grey pixels, which decoding made already for the pHash, and reads what the colour pixels read."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from trajcheck.base import diskcache
from trajcheck.base.box import Box
from trajcheck.media import frames, ocr

from conftest import SAMPLES

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")

#: A sample frame with a message box: the dark-theme profile page and its "Profile saved" toast.
FRAME = SAMPLES / "dark-faint-and-toast" / "frames" / "005.png"


@pytest.fixture
def calls(monkeypatch, tmp_path) -> list[tuple[int, int]]:
    """A fresh cache (disk and memory), and the size of every image Tesseract is given."""
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    monkeypatch.setattr(ocr, "_reads", {})
    seen: list[tuple[int, int]] = []
    real = ocr._recognise

    def counting(eng, img):
        seen.append(img.size)
        return real(eng, img)

    monkeypatch.setattr(ocr, "_recognise", counting)
    return seen


def _read(px: np.ndarray, box: Box, scale: float = 1.0) -> list:
    assert ENGINE is not None
    return ocr.read_lines(ENGINE, px, box, scale)


@needs_ocr
def test_the_grey_pixels_read_as_the_colour_pixels_do(calls):
    frame = frames.decode(FRAME)
    whole = Box(0, 0, frame.width, frame.height)
    by_luma = _read(frame.luma, whole, ocr.TEXT_SCALE)
    from_colour = ocr.prepare(frame.px, ocr.TEXT_SCALE)
    assert np.array_equal(np.asarray(from_colour), np.asarray(ocr.prepare(frame.luma, ocr.TEXT_SCALE)))
    ocr._reads.clear()
    assert _read(frame.px, whole, ocr.TEXT_SCALE) == by_luma and len(by_luma) >= 3


@needs_ocr
def test_a_crop_read_before_is_not_read_again_wherever_it_sits(calls):
    px = np.asarray(Image.open(FRAME).convert("L"))
    lines = _read(px, Box(0, 0, px.shape[1], px.shape[0]), ocr.TEXT_SCALE)
    toast = next(x for x in lines if "saved" in x.text.lower())
    b = toast.box
    box = Box(b.left - 8, b.top - 8, b.right + 8, b.bottom + 8)
    first = _read(px, box)
    n = len(calls)
    assert _read(px, box) == first and len(calls) == n  # the same crop: served
    moved = np.full((px.shape[0] + 100, px.shape[1] + 60), 255, np.uint8)
    moved[100:, 60:] = px  # the same screen, 60 px right and 100 px down (another window position)
    shifted = _read(moved, Box(box.left + 60, box.top + 100, box.right + 60, box.bottom + 100))
    assert len(calls) == n  # the same pixels: not read again
    assert [(x.text, x.confidence) for x in shifted] == [(x.text, x.confidence) for x in first]
    assert [x.box for x in shifted] == [Box(x.box.left + 60, x.box.top + 100, x.box.right + 60,
                                            x.box.bottom + 100) for x in first]
    other = px.copy()
    other[box.top + 2:box.top + 4, box.left + 2:box.left + 30] = 0  # one pixel row drawn over: read again
    _read(other, box)
    assert len(calls) == n + 1


@pytest.mark.slow
@needs_ocr
def test_reads_are_kept_on_disk_and_a_damaged_entry_is_read_again(calls, monkeypatch, tmp_path):
    px = np.asarray(Image.open(FRAME).convert("L"))
    boxes = [Box(0, 0, px.shape[1], px.shape[0] // 2), Box(0, px.shape[0] // 2, px.shape[1], px.shape[0])]
    first = [_read(px, b) for b in boxes]
    assert len(calls) == 2
    monkeypatch.setattr(ocr, "_reads", {})  # another process: only the disk is shared
    assert [_read(px, b) for b in boxes] == first and len(calls) == 2
    files = sorted((tmp_path / "cache" / "ocrcrop").glob("*.json"))
    assert len(files) == 2
    for k, f in enumerate(files):  # a box cut short under a right checksum; a wrong checksum
        data = json.loads(f.read_text())
        for version, entry in data.items():
            bad = [[str(v[0]), 0.5, 1, 2] for v in entry["value"]] or [["x", 1, 2]]
            data[version] = diskcache.checked_entry(bad) if k == 0 else dict(entry, checksum="0" * 32)
        f.write_text(json.dumps(data))
    monkeypatch.setattr(ocr, "_reads", {})
    assert [_read(px, b) for b in boxes] == first and len(calls) == 4  # both read again, the same


def test_a_kept_read_of_the_wrong_shape_is_not_used():
    assert ocr._kept([["Saved", 0.9, 1, 2, 3, 4]]) == [("Saved", 0.9, 1, 2, 3, 4)]
    for bad in (None, {"a": 1}, [["Saved", 0.9, 1, 2, 3]], [["Saved", "high", 1, 2, 3, 4]], [3]):
        assert ocr._kept(bad) is None


# Issue 39, part 3: a screen check that has not found its text reads what a page read misses before it fails.


def _page(fill: int, text: int, ground: int = 255) -> np.ndarray:
    """A 400x240 page of ``ground`` grey with a 120x40 solid element of ``fill`` at (100, 60), three strokes of
    ``text`` in it, and a line of thin dark text elsewhere."""
    px = np.full((240, 400), ground, np.uint8)
    px[60:100, 100:220] = fill
    for x in (120, 140, 160):
        px[72:88, x:x + 2] = text
    for x in range(40, 360, 6):  # text: thin strokes, no cell of it dark on average
        px[180:192, x] = 0
    return px


def test_islands_are_the_solid_elements_set_off_from_the_page():
    whole = Box(0, 0, 400, 240)
    assert ocr.islands(_page(83, 255), whole, 1.0) == [Box(100, 60, 220, 100)]  # white on blue
    assert ocr.islands(_page(154, 255), whole, 1.0) == [Box(100, 60, 220, 100)]  # white on light blue
    assert ocr.islands(_page(110, 255, ground=35), whole, 1.0) == [Box(100, 60, 220, 100)]  # grey on a dark page
    assert ocr.islands(_page(245, 0), whole, 1.0) == []  # a light input box: no contrast with the page
    assert ocr.islands(_page(83, 255), Box(0, 150, 400, 240), 1.0) == []  # only in the area asked
    assert ocr.islands(_page(83, 255), whole, 2.0) == [Box(96, 56, 224, 104)]  # HiDPI: 8-px cells
    chip = np.full((240, 400), 255, np.uint8)
    chip[60:68, 100:220] = 83  # 8 px high: two cells, too thin to hold a line of text
    assert ocr.islands(chip, whole, 1.0) == []
    bold = np.full((240, 400), 255, np.uint8)
    bold[100:116, 40:120] = 20  # a word of heavy text, 16 px high: left to the page read, not read alone
    assert ocr.islands(bold, whole, 1.0) == []
    bold[100:120, 40:120] = 20  # 20 px high: an element
    assert ocr.islands(bold, whole, 1.0) == [Box(40, 100, 120, 120)]
    big = np.full((240, 400), 255, np.uint8)
    big[:130] = 40  # over a quarter of the area: the page itself, not an element on it
    assert ocr.islands(big, whole, 1.0) == []


def test_the_text_of_a_solid_element_is_lighter_or_darker_than_its_fill():
    assert ocr.light_text(_page(83, 255)[60:100, 100:220])
    assert not ocr.light_text(_page(230, 0, ground=255)[60:100, 100:220])


@needs_ocr
def test_white_text_on_a_blue_button_is_read_alone():
    px = np.asarray(Image.open(SAMPLES / "nc-pay-loop" / "frames" / "006.png").convert("L"))
    found = ocr.islands(px, Box(0, 0, px.shape[1], px.shape[0]), 1.0)
    button = [b for b in found if b.left <= 340 <= b.right and b.top <= 274 <= b.bottom]
    assert len(button) == 1
    lines = ocr.read_island(ENGINE, px, button[0], 1.0)
    assert [x.text for x in lines] == ["Pay now"]
    assert button[0].left <= lines[0].box.left < lines[0].box.right <= button[0].right


def test_the_cache_of_reads_is_kept_bounded(monkeypatch, tmp_path):
    import os

    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    assert diskcache.prune("ocrcrop", keep=20) == 0  # no folder yet
    folder = tmp_path / "ocrcrop"
    folder.mkdir()
    for k in range(30):
        f = folder / f"{k:02d}.json"
        f.write_text("{}")
        os.utime(f, (1_000_000 + k, 1_000_000 + k))
    (folder / "sub").mkdir()
    assert diskcache.prune("ocrcrop", keep=40) == 0
    assert diskcache.prune("ocrcrop", keep=20) == 12  # down to nine tenths of 20, the oldest first
    assert sorted(p.name for p in folder.iterdir()) == [f"{k:02d}.json" for k in range(12, 30)] + ["sub"]


def test_a_page_dimmed_behind_a_dialog_is_told_from_plain_pages():
    whole = Box(0, 0, 400, 240)
    page = np.full((240, 400), 100, np.uint8)  # a page darkened to mid-grey by an overlay
    page[150:230, 250:390] = 255  # the dialog in front of it: 11% of the screen
    assert ocr.dimmed(page, whole, 1.0)
    assert not ocr.dimmed(np.full((240, 400), 250, np.uint8), whole, 1.0)  # a light page
    assert not ocr.dimmed(np.full((240, 400), 30, np.uint8), whole, 1.0)  # a dark theme
    grey = np.full((240, 400), 100, np.uint8)  # a grey page with nothing light on it
    assert not ocr.dimmed(grey, whole, 1.0)
    text = page.copy()
    text[::2, ::2] = 0  # ink everywhere: no flat ground to speak of
    assert not ocr.dimmed(text, whole, 1.0)


@needs_ocr
def test_the_text_of_a_page_dimmed_behind_a_dialog_is_read_with_its_light_evened_out():
    px = np.asarray(Image.open(SAMPLES / "consent-overlay-off" / "frames" / "003.png").convert("L"))
    whole = Box(0, 0, px.shape[1], px.shape[0])
    assert ocr.dimmed(px, whole, 1.0)
    assert "Email address" not in [x.text for x in ocr.read_lines(ENGINE, px, whole, ocr.TEXT_SCALE)]
    assert "Email address" in [x.text for x in ocr.read_evened(ENGINE, px, whole, ocr.TEXT_SCALE)]


def test_a_cache_of_subfolders_is_kept_bounded_across_them(monkeypatch, tmp_path):
    import os

    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    k = 0
    for sub in ("ab", "cd", "ef"):  # the thumbnails' layout: a subfolder per first two hex digits
        (tmp_path / "thumbs-v1" / sub).mkdir(parents=True)
        for _ in range(10):
            f = tmp_path / "thumbs-v1" / sub / f"{k:02d}.webp"
            f.write_bytes(b"x")
            os.utime(f, (1_000_000 + k, 1_000_000 + k))
            k += 1
    assert diskcache.prune("thumbs-v1", keep=20) == 0  # not nested: no file at the top
    assert diskcache.prune("thumbs-v1", keep=20, nested=True) == 12
    left = sorted(p.name for p in (tmp_path / "thumbs-v1").rglob("*.webp"))
    assert left == [f"{k:02d}.webp" for k in range(12, 30)]


@pytest.mark.slow
def test_a_report_leaves_the_thumbnail_cache_bounded_and_keeps_its_own(sample_ledger, monkeypatch, tmp_path):
    import trajcheck
    from trajcheck.render import reportbuild

    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    monkeypatch.setattr(reportbuild, "THUMBS_KEPT", 5)
    trajcheck.report(sample_ledger, tmp_path / "rep", max_runs=4, jobs=1)
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and "thumbs-" in str(p)]
    assert 0 < len(cached) <= 5
    in_report = [p for p in (tmp_path / "rep").rglob("*") if p.suffix in (".webp", ".png", ".jpg")]
    assert len(in_report) > 5


def _page_with(text: str, ink: int, ground: int, size: tuple[int, int] = (120, 400)) -> np.ndarray:
    """A grey page of ``ground`` with ``text`` drawn at (20, 40) in ``ink`` (Pillow's default font, 16 px)."""
    from PIL import ImageDraw, ImageFont

    img = Image.new("L", (size[1], size[0]), ground)
    ImageDraw.Draw(img).text((20, 40), text, fill=ink, font=ImageFont.load_default(size=16))
    return np.asarray(img)


def test_faint_words_are_told_from_strong_text_borders_and_noise():
    whole = Box(0, 0, 400, 120)
    got = ocr.faint(_page_with("Preferences saved", 62, 36), whole, 1.0)  # grey on a dark grey: 26 levels
    assert len(got) == 1 and got[0].left <= 20 and got[0].top <= 40 and got[0].bottom >= 52  # one line, whole
    assert ocr.faint(_page_with("Preferences saved", 200, 36), whole, 1.0) == []  # strong text: the page reads it
    assert ocr.faint(np.full((120, 400), 36, np.uint8), whole, 1.0) == []  # a flat ground
    border = np.full((120, 400), 255, np.uint8)
    border[60, :] = 230  # a light border: one cell high
    assert ocr.faint(border, whole, 1.0) == []
    noisy = (np.full((120, 400), 240, np.int16) + np.random.default_rng(1).integers(-4, 5, (120, 400)))
    assert ocr.faint(noisy.astype(np.uint8), whole, 1.0) == []  # JPEG-like noise spreads under 10 levels


@needs_ocr
def test_faint_text_a_page_read_misses_is_read_with_its_contrast_stretched():
    px = np.asarray(Image.open(FRAME).convert("L"))  # "Preferences saved" in grey on the dark page
    whole = Box(0, 0, px.shape[1], px.shape[0])
    assert "Preferences saved" not in [x.text for x in ocr.read_lines(ENGINE, px, whole, ocr.TEXT_SCALE)]
    groups = ocr.faint(px, whole, 1.0)
    assert groups and all(b.height <= 40 for b in groups)
    got = [x for b in groups for x in ocr.read_faint(ENGINE, px, b, 1.0)]
    assert [x.text for x in got] == ["Preferences saved"] and got[0].confidence >= 0.8
    assert 240 <= got[0].box.top and got[0].box.bottom <= 280  # in frame pixels, where the text is


@needs_ocr
def test_an_icon_read_as_a_sign_does_not_make_its_lines_words_doubtful():
    """The toggle before "Spell check" is read as "@®" at 0.32; Tesseract's line confidence, 0.75, would leave
    a check of the label undecided. A line's confidence is its words' that hold a letter or digit."""
    px = np.asarray(Image.open(FRAME).convert("L"))
    lines = ocr.read_lines(ENGINE, px, Box(0, 0, px.shape[1], px.shape[0]), ocr.TEXT_SCALE)
    spell = [x for x in lines if x.text.endswith("Spell check")]
    assert len(spell) == 1 and not spell[0].text.startswith("Spell")  # the icon is read, as a sign
    assert spell[0].confidence >= 0.9
    assert all(x.confidence >= 0.9 for x in lines if x.text in ("Editor settings", "Save profile"))
