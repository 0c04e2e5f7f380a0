"""The fast PNG decoders give Pillow's pixels, and every damaged file goes back to the decoder whose
verdict trajcheck reports."""

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from trajcheck.media import frames
from trajcheck.base.box import Box
from trajcheck.media.frames import FrameError, decode

from conftest import REALRUNS, sample_frames

pytest.importorskip("pywuffs")  # the "fast" extra, which the test extra installs


def _pillow_pixels(raw: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(raw)) as img:
        return np.asarray(img.convert("L") if img.mode == "L" else img.convert("RGBA"))


def _colour(raw: bytes) -> int:
    return raw[25]


def _recorded_pngs() -> list[Path]:
    found = [p for p in sample_frames() if p.suffix == ".png"]
    found += sorted(REALRUNS.glob("**/*.png"))[:60] if REALRUNS.is_dir() else []
    return found


@pytest.mark.realruns
def test_wuffs_gives_pillows_pixels_on_recorded_frames():
    used = 0
    checked = 0
    for path in _recorded_pngs():
        raw = path.read_bytes()
        try:
            ref = _pillow_pixels(raw)
        except OSError:  # a damaged file among the real runs: covered below
            continue
        if raw[24] != 8 or _colour(raw) not in (0, 2, 6):
            continue
        checked += 1
        got = frames._wuffs_png(raw, _colour(raw))
        if got is None:
            continue
        used += 1
        assert np.array_equal(got, ref), path  # RGB frames: Pillow's RGB -> RGBA gives alpha 255, as Wuffs does
    # Chromium's screenshots are valid PNGs: Wuffs must take every one of them
    assert checked >= 30 and used == checked


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA"])
def test_wuffs_on_noise_images_of_each_colour_type(mode):
    rng = np.random.default_rng(7)
    for w, h in [(1, 1), (37, 53), (640, 3)]:
        arr = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        img = Image.fromarray(arr, "RGBA").convert(mode)
        buf = io.BytesIO()
        img.save(buf, "PNG", optimize=True)  # Pillow picks filters per row, so all five are exercised
        raw = buf.getvalue()
        got = frames._wuffs_png(raw, _colour(raw))
        assert got is not None
        assert np.array_equal(got, _pillow_pixels(raw))
        # and decode() hands the same pixels on
        frame = decode(Path(f"noise-{mode}.png"), raw)
        assert np.array_equal(frame.luma, np.asarray(img.convert("L")))


def _chunks(raw: bytes) -> list[tuple[bytes, bytes]]:
    out, pos = [], 8
    while pos < len(raw):
        (n,) = struct.unpack(">I", raw[pos:pos + 4])
        out.append((raw[pos + 4:pos + 8], raw[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def _png(chunks: list[tuple[bytes, bytes]]) -> bytes:
    body = b"".join(struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d)) for k, d in chunks)
    return b"\x89PNG\r\n\x1a\n" + body


@pytest.fixture
def screenshot() -> bytes:
    return next(p for p in sample_frames() if p.suffix == ".png").read_bytes()


def test_intact_chunks_are_recognised(screenshot):
    assert frames._chunks_intact(screenshot)
    assert frames._chunks_intact(_png(_chunks(screenshot)))  # rebuilt the same way


def test_damaged_files_do_not_reach_wuffs(screenshot):
    chunks = _chunks(screenshot)
    idat = next(i for i, (k, _) in enumerate(chunks) if k == b"IDAT")
    bad_crc = bytearray(screenshot)
    bad_crc[-5] ^= 0xFF  # IEND's CRC
    trns = chunks[:idat] + [(b"tRNS", b"\x00\x00\x00\x00\x00\x00")] + chunks[idat:]
    for raw in [bytes(bad_crc), screenshot[:-4], screenshot[: len(screenshot) // 2], screenshot + b"junk",
                _png(chunks[:-1]), _png(trns), b"GIF89a" + screenshot[6:]]:
        assert not frames._chunks_intact(raw)
        assert frames._wuffs_png(raw, 2) is None


def test_corrupt_pixel_data_with_valid_crcs_gets_the_fallback_verdict(screenshot):
    """Deflate data damaged but re-checksummed passes the chunk check; Wuffs refuses it and the file goes
    to libspng/Pillow: decode() then either reports it as unreadable or gives Pillow's own pixels."""
    chunks = _chunks(screenshot)
    idat = next(i for i, (k, _) in enumerate(chunks) if k == b"IDAT")
    kind, data = chunks[idat]
    outcomes = set()
    for at in (2, len(data) // 3, len(data) // 2, len(data) - 6):
        broken = bytearray(data)
        broken[at] ^= 0x5A
        raw = _png(chunks[:idat] + [(kind, bytes(broken))] + chunks[idat + 1:])
        assert frames._chunks_intact(raw)
        try:
            frame = decode(Path("broken.png"), raw)
        except FrameError as exc:
            assert exc.slug == "frame_unreadable"
            outcomes.add("unreadable")
            continue
        with Image.open(io.BytesIO(raw)) as img:  # the fallback decoded it: Pillow agrees pixel for pixel
            assert np.array_equal(frame.luma, np.asarray(img.convert("L")))
        outcomes.add("decoded")
    assert "unreadable" in outcomes


def _encoded(pixels: np.ndarray, level: int = 6) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG", compress_level=level)
    return buf.getvalue()


def _same_frame(a: frames.Frame, b: frames.Frame) -> None:
    assert a.phash == b.phash
    assert np.array_equal(a.luma, b.luma) and np.array_equal(np.asarray(a.gray), np.asarray(b.gray))
    assert np.array_equal(a.px, b.px) and a.rows is not None and b.rows is not None
    assert np.array_equal(a.rows, b.rows)


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_a_frame_decoded_like_the_previous_one_is_the_same_frame(mode):
    """Decoded like the frame before it, a frame converts and resizes only the rows that differ; every
    derived signal is the same as decoding it alone, and the band is where the pixels differ."""
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, (200, 320, len(mode)), dtype=np.uint8)
    base[::3] = base[0]  # repeated rows, as screenshots have
    changed = base.copy()
    changed[61:97, 40:90] = rng.integers(0, 256, (36, 50, len(mode)), dtype=np.uint8)
    first = decode(Path("a.png"), _encoded(base))
    second = decode(Path("b.png"), _encoded(changed), like=first)
    assert second.band == (61, 97) and second.like is not None and second.like() is first
    _same_frame(second, decode(Path("b.png"), _encoded(changed)))
    again = decode(Path("c.png"), _encoded(base, level=1), like=second)  # first's pixels in other bytes
    assert again.band == (61, 97)
    _same_frame(again, first)
    same = decode(Path("d.png"), _encoded(base, level=9), like=again)
    assert same.band == (0, 0)
    _same_frame(same, first)


def test_a_frame_of_another_size_is_decoded_alone():
    rng = np.random.default_rng(8)
    first = decode(Path("a.png"), _encoded(rng.integers(0, 256, (200, 320, 3), dtype=np.uint8)))
    other = rng.integers(0, 256, (120, 320, 3), dtype=np.uint8)
    second = decode(Path("b.png"), _encoded(other), like=first)
    assert second.band is None and second.like is None
    _same_frame(second, decode(Path("b.png"), _encoded(other)))


def test_region_hashes_outside_the_band_come_from_the_frame_decoded_before():
    """A region whose rows lie outside the band where a frame differs from the one it was decoded like has
    that frame's pixels: its hash is taken from there (the same object), and every region hash equals the
    hash of the frame decoded alone, across a chain of frames and after the earlier frame is gone."""
    rng = np.random.default_rng(9)
    base = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    changed = base.copy()
    changed[100:130, 40:90] = rng.integers(0, 256, (30, 50, 3), dtype=np.uint8)
    first = decode(Path("a.png"), _encoded(base))
    second = decode(Path("b.png"), _encoded(changed), like=first)
    third = decode(Path("c.png"), _encoded(changed, level=1), like=second)  # second's pixels in other bytes
    alone = decode(Path("b.png"), _encoded(changed))
    assert second.band == (100, 130) and third.band == (0, 0)
    above, inside, across, below = Box(10, 0, 110, 100), Box(30, 100, 130, 130), Box(0, 50, 120, 170), \
        Box(200, 130, 300, 240)
    for box in (above, inside, across, below):
        assert third.region_hash(box) == second.region_hash(box) == alone.region_hash(box)
    assert second.regions[above] is first.regions[above] and third.regions[below] is first.regions[below]
    assert inside not in first.regions and across not in first.regions  # computed from second's own pixels
    for odd in (Box(0, 0, 320, -5), Box(0, -20, 320, 240)):  # rows counted from the end, as numpy slices them
        assert third.region_hash(odd) == alone.region_hash(odd)
    del first, second
    fourth = decode(Path("d.png"), _encoded(changed, level=9), like=third)
    assert fourth.region_hash(Box(0, 0, 64, 64)) == alone.region_hash(Box(0, 0, 64, 64))
