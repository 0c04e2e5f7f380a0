"""trajcheck's hashes are bit-identical to imagehash.phash, on every sample frame."""

import imagehash
import pytest
from PIL import Image

from trajcheck.frames import decode, region_box
from trajcheck.hashing import Hash64

from conftest import sample_frames

FRAMES = sample_frames()




def test_there_are_sample_frames():
    assert len(FRAMES) >= 30


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
