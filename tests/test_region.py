"""The 200x200 region around the action point, at the borders and outside the frame."""

import pytest

from trajcheck.media.frames import region_box, to_frame


@pytest.mark.parametrize("x,y,box", [
    (640, 400, (540, 300, 740, 500)),  # centred
    (0, 0, (0, 0, 200, 200)),  # top-left corner: shifted inward, full size
    (1279, 799, (1080, 600, 1280, 800)),  # bottom-right corner
    (50, 400, (0, 300, 200, 500)),  # near the left edge
    (640.6, 399.4, (541, 299, 741, 499)),  # fractional point: rounded
])
def test_box_keeps_full_size_inside_the_frame(x, y, box):
    assert region_box(x, y, 1280, 800) == box


@pytest.mark.parametrize("x,y", [(-1, 10), (10, -0.5), (1280, 10), (10, 800), (5000, 5000)])
def test_point_outside_the_frame_has_no_box(x, y):
    assert region_box(x, y, 1280, 800) is None


def test_small_frame_is_taken_whole_in_that_dimension():
    assert region_box(50, 20, 120, 40) == (0, 0, 120, 40)


def test_screen_coordinates_scale_to_frame_pixels():
    fx, fy, sx, sy = to_frame(640, 400, (1280, 800), (2560, 1600))
    assert (fx, fy, sx, sy) == (1280, 800, 2.0, 2.0)
    assert to_frame(10, 20, (None, None), (100, 100))[:2] == (10, 20)
