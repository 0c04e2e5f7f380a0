"""The numpy LANCZOS resize gives Pillow's bytes, so pHashes stay bit-identical to imagehash.phash."""

from __future__ import annotations

import imagehash
import numpy as np
import pytest
from PIL import Image

from trajcheck.base import resample
from trajcheck.media.frames import decode
from trajcheck.base.hashing import Hash64

from conftest import REALRUNS, sample_frames


def _pillow(gray: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(gray).resize((32, 32), Image.Resampling.LANCZOS))


def _real_frames(limit: int = 60) -> list:
    """Screenshots recorded by other harnesses (WebVoyager, BrowserGym, browser-use), several sizes."""
    files = sorted(p for p in REALRUNS.rglob("*") if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
    by_size: dict = {}
    for p in files:
        try:
            with Image.open(p) as im:
                by_size.setdefault(im.size, []).append(p)
        except OSError:
            continue
    # a few of every size the real runs have, then fill up to ``limit``
    picked = [p for ps in by_size.values() for p in ps[:4]]
    picked += [p for p in files if p not in picked][: max(0, limit - len(picked))]
    return picked


REAL = _real_frames()


@pytest.mark.realruns
@pytest.mark.skipif(not REALRUNS.is_dir(), reason="../shared/realruns is absent (a user's clone has none): the "
                    "real-frame hash checks need the recorded third-party runs beside the checkout")
def test_real_frames_cover_several_sizes():
    sizes = {Image.open(p).size for p in REAL}
    assert len(REAL) >= 20 and len(sizes) >= 3, sizes


@pytest.mark.realruns
@pytest.mark.parametrize("path", REAL or [pytest.param(None, marks=pytest.mark.skip(
    reason="../shared/realruns is absent (a user's clone has none): the real-frame hash checks need the recorded "
    "third-party runs beside the checkout"))], ids=lambda p: f"{p.parent.name}/{p.name}" if p else "no-real-runs")
def test_real_frame_hashes_equal_imagehash(path):
    try:
        frame = decode(path)
    except Exception:  # noqa: BLE001  (a truncated file among the real runs: not this test's subject)
        pytest.skip("frame does not decode")
    with Image.open(path) as img:
        assert str(frame.phash) == str(imagehash.phash(img))
        assert np.array_equal(resample.resize_gray(frame.luma), _pillow(frame.luma))
        w, h = img.size
        for box in [(0, 0, 200, 200), (w - 200, h - 200, w, h), (w // 3, h // 3, w // 3 + 200, h // 3 + 200)]:
            assert str(frame.region_hash(box)) == str(imagehash.phash(img.crop(box))), box


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 800), (800, 1280), (2560, 1600), (1920, 1080), (1366, 768), (200, 200),
                                  (33, 5000), (17, 900), (5000, 31), (31, 31), (32, 32), (7, 3), (1, 1)])
def test_noise_images_of_many_shapes(size):
    """Noise exposes any difference in coefficients, rounding or pass order; tall narrow images are
    resized column pass first by Pillow 13, and pass_order finds that."""
    w, h = size
    gray = np.random.default_rng(7).integers(0, 256, (h, w), dtype=np.uint8)
    order = resample.pass_order(w, h)
    assert order in ("h", "v")
    assert np.array_equal(resample.resize_gray(gray, order=order), _pillow(gray))
    assert str(Hash64.of_gray(gray)) == str(imagehash.phash(Image.fromarray(gray)))


def test_tall_narrow_image_needs_the_column_pass_first():
    gray = np.random.default_rng(3).integers(0, 256, (900, 17), dtype=np.uint8)
    assert resample.pass_order(17, 900) == "v"
    assert not np.array_equal(resample.resize_gray(gray, order="h"), _pillow(gray))


def test_a_size_that_matches_in_no_order_is_hashed_by_pillow(monkeypatch):
    gray = np.asarray(Image.open(sample_frames()[0]).convert("L"))
    h, w = gray.shape
    monkeypatch.setitem(resample._orders, (w, h), None)
    called = []
    monkeypatch.setattr(resample, "resize_gray", lambda *a, **k: called.append(1))
    assert str(Hash64.of_gray(gray)) == str(imagehash.phash(Image.fromarray(gray)))
    assert called == []


@pytest.mark.slow
def test_float32_split_is_refused_for_windows_too_wide_to_stay_exact():
    assert resample._banded(1280, 32) is not None
    assert resample._banded(20000, 32) is None  # windows of ~3750 taps: low-part sums pass 2**24
    gray = np.random.default_rng(5).integers(0, 256, (40, 20000), dtype=np.uint8)
    assert np.array_equal(resample.resize_gray(gray), _pillow(gray))


@pytest.mark.slow
def test_repeated_rows_are_resized_once_with_the_same_result():
    gray = np.asarray(Image.open(sample_frames()[0]).convert("L"))
    rows = resample._distinct_rows(gray)
    assert rows is not None and len(rows[0]) < gray.shape[0]  # screenshots repeat rows
    assert np.array_equal(resample._rows_pass(rows[0], 32)[rows[1]], resample._rows_pass(gray, 32))
    assert np.array_equal(resample.resize_gray(gray), _pillow(gray))
    noise = np.random.default_rng(1).integers(0, 256, (100, 64), dtype=np.uint8)
    assert resample._distinct_rows(noise) is None  # nothing repeats: the plain pass
