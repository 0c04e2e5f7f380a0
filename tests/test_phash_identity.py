"""trajcheck's hashes are bit-identical to imagehash.phash, on every sample frame."""

import imagehash
import pytest
from PIL import Image

from trajcheck.media.frames import decode, region_box
from trajcheck.base.hashing import Hash64

from conftest import sample_frames

FRAMES = sample_frames()




def test_there_are_sample_frames():
    assert len(FRAMES) >= 30


@pytest.mark.slow
@pytest.mark.parametrize("path", FRAMES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_global_and_region_hashes_equal_imagehash(path):
    frame = decode(path)
    with Image.open(path) as img:
        assert str(frame.phash) == str(imagehash.phash(img))
        w, h = img.size
        # the centre, the four corners (boxes shifted inward) and an off-centre point
        for x, y in [(w / 2, h / 2), (0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w * 0.3, h * 0.7)]:
            box = region_box(x, y, w, h)
            assert str(frame.region_hash(box)) == str(imagehash.phash(img.crop(box))), (x, y, box)


def test_hash_value_object_round_trips():
    h = Hash64.from_hex("8f3c00ff12a4e001")
    assert str(h) == "8f3c00ff12a4e001" and Hash64.from_hex(str(h)) == h
    assert h - h == 0 and h - Hash64(h.value ^ 0b1011) == 3
    with pytest.raises(ValueError):
        Hash64.from_hex("abc")


def _images():
    """Flat, stepped, striped and noisy images: flat areas put DCT coefficients exactly at the median,
    where the bit depends on the last digits of the transform."""
    import numpy as np

    rng = np.random.default_rng(7)
    out = [np.full((64, 64), v, dtype=np.uint8) for v in (0, 128, 255)]
    step = np.zeros((80, 120), dtype=np.uint8)
    step[:, 60:] = 200
    out.append(step)
    out.append(np.tile(np.array([0, 255], dtype=np.uint8), (50, 50)))
    out.append(np.tile(np.arange(256, dtype=np.uint8), (40, 1)))
    out += [rng.integers(0, 256, (h, w), dtype=np.uint8) for h, w in ((32, 32), (100, 37), (240, 320))]
    out += [(rng.random((90, 160)) < 0.02).astype(np.uint8) * 255 for _ in range(20)]  # sparse dots on white
    # flat along one axis (decided without scipy, see hashing._exact_bits): blank areas of many greys,
    # horizontal rules and bands, vertical bands, of the sizes the 200x200 region crop and whole frames have
    out += [np.full((200, 200), v, dtype=np.uint8) for v in (1, 17, 64, 127, 200, 254)]
    for h, w in ((200, 200), (800, 1280), (37, 91)):
        for _ in range(4):
            profile = np.sort(rng.integers(0, 256, 1 + int(rng.integers(1, 6))))[rng.integers(0, 2, h).cumsum() % 2]
            out.append(np.tile(profile.astype(np.uint8)[:, None], (1, w)))  # every row one value
            cols = rng.choice(np.array([255, 240, 30], dtype=np.uint8), w)
            out.append(np.tile(cols[None, :], (h, 1)))  # every column one value
    # mirror-symmetric along an axis (a centred rule or button; see hashing._exact_zeros)
    for h, w in ((200, 200), (64, 64)):
        for _ in range(4):
            half = np.where(rng.random(h // 2) < 0.2, 40, 250).astype(np.uint8)
            out.append(np.tile(np.concatenate([half, half[::-1]])[:, None], (1, w)))  # rows flat, centred
            left = rng.integers(0, 256, (h, w // 2), dtype=np.uint8)
            out.append(np.concatenate([left, left[:, ::-1]], axis=1))  # left-right mirror
            top = (rng.random((h // 2, w)) < 0.1).astype(np.uint8) * 255
            out.append(np.concatenate([top, top[::-1]], axis=0))  # up-down mirror
            # rows flat, mirrored pairs summing to 255: columns whose only exact zeros are at even k >= 2
            dark = rng.integers(0, 256, h // 2)
            out.append(np.tile(np.concatenate([dark, (255 - dark)[::-1]]).astype(np.uint8)[:, None], (1, w)))
    return out


@pytest.mark.parametrize("gray", _images(), ids=lambda a: f"{a.shape[1]}x{a.shape[0]}-{int(a.mean())}")
def test_the_dct_by_matrix_products_keeps_every_bit(gray):
    """Hash64.of_gray takes the 8x8 DCT block as two matrix products and falls back to scipy's DCT when a
    coefficient sits within rounding of the median: the bits stay imagehash's."""
    assert str(Hash64.of_gray(gray)) == str(imagehash.phash(Image.fromarray(gray)))


def test_the_median_is_numpys():
    """hashing._median (no numpy.ma import) equals np.median on 8x8 blocks, ties and zeros included."""
    import numpy as np

    from trajcheck.base.hashing import _median

    rng = np.random.default_rng(11)
    blocks = [rng.normal(0, 10.0 ** int(rng.integers(-3, 6)), (8, 8)) for _ in range(2000)]
    blocks += [np.zeros((8, 8)), np.full((8, 8), 3.5), np.arange(64.0).reshape(8, 8) * -1.0]
    for b in blocks[:500]:
        b[rng.random((8, 8)) < 0.5] = 0.0
    assert all(_median(b) == float(np.median(b)) for b in blocks)


@pytest.mark.parametrize("kind", ["flat", "mirror", "pair_sum"])
def test_blocks_at_the_median_are_decided_without_scipy_and_as_scipy_decides(kind):
    """Each rule of hashing._exact_zeros decides its blocks on its own (no fallback to scipy's DCT), and the
    bits are the ones scipy's DCT gives."""
    import numpy as np
    import scipy.fftpack

    from trajcheck.base import hashing

    rng = np.random.default_rng({"flat": 1, "mirror": 2, "pair_sum": 3}[kind])
    for _ in range(200):
        half = rng.integers(0, 256, 16)
        profile = {"flat": np.full(32, half[0]), "mirror": np.concatenate([half, half[::-1]]),
                   "pair_sum": np.concatenate([half, (255 - half)[::-1]])}[kind]
        px = np.tile(profile.astype(np.float64)[:, None], (1, 32))  # every row one value
        low = hashing._DCT8 @ px @ hashing._DCT8.T
        bits = hashing._exact_bits(px, low, hashing._NEAR * (1.0 + float(np.abs(low).max())))
        assert bits is not None, profile
        want = scipy.fftpack.dct(scipy.fftpack.dct(px, axis=0), axis=1)[:8, :8]
        assert np.array_equal(bits, want > np.median(want)), profile
