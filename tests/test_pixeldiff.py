"""Exact pixel change and its shapes, on synthetic arrays (pure function)."""

import numpy as np
import pytest

from trajcheck.analyzers.pixeldiff import diff_frames, no_change


def blank(h=400, w=600, v=255):
    return np.full((h, w, 3), v, dtype=np.uint8)


def test_identical_frames_have_no_change():
    a = blank()
    cm = diff_frames(a, a.copy(), region=(0, 0, 200, 200))
    assert cm.changed_px == 0 and cm.bbox is None and cm.blobs == () and cm.region_px == 0
    assert not no_change(600, 400).changed


def test_outline_is_recognised():
    a = blank()
    b = a.copy()
    b[100:140, 200:203] = (0, 90, 255)  # left side
    b[100:140, 297:300] = (0, 90, 255)  # right
    b[100:103, 200:300] = (0, 90, 255)  # top
    b[137:140, 200:300] = (0, 90, 255)  # bottom
    cm = diff_frames(a, b)
    assert [bl.kind for bl in cm.blobs] == ["outline"]
    assert cm.bbox == (200, 100, 300, 140)


def test_filled_box_is_content_and_caret_is_caret():
    a = blank()
    b = a.copy()
    b[100:140, 200:300] = 0  # a filled block: content
    b[300:318, 500:502] = 0  # a 2px wide, 18px tall caret
    cm = diff_frames(a, b)
    kinds = sorted(bl.kind for bl in cm.blobs)
    assert kinds == ["caret", "content"]


def test_text_inside_an_outline_is_content():
    a = blank()
    b = a.copy()
    b[100:103, 200:300] = 0
    b[137:140, 200:300] = 0
    b[100:140, 200:203] = 0
    b[100:140, 297:300] = 0
    b[115:125, 220:280] = 0  # new text inside the box
    cm = diff_frames(a, b)
    content = [bl for bl in cm.blobs if bl.kind == "content"]
    assert content and sum(bl.px for bl in content) >= 10 * 60


def test_tolerance_and_region_count():
    a = blank()
    b = a.copy()
    b[10:20, 10:20] = 250  # 5 levels darker
    assert diff_frames(a, b).changed_px == 100
    assert diff_frames(a, b, tolerance=5).changed_px == 0
    assert diff_frames(a, b, region=(0, 0, 15, 15)).region_px == 25


def test_size_change_is_all_change():
    cm = diff_frames(blank(), blank(200, 300))
    assert cm.size_changed and cm.changed_px == 200 * 300


def _button(frame, fill, text):
    frame[100:140, 200:320] = fill
    frame[115:125, 230:290] = text  # a bar standing in for the label's glyphs
    return frame


def test_recolour_under_the_pointer_is_a_restyle():
    a = _button(blank(), (13, 110, 253), (255, 255, 255))
    b = _button(blank(), (11, 94, 215), (255, 255, 255))  # Bootstrap's hover shade, same shapes
    assert [bl.kind for bl in diff_frames(a, b, point=(260, 120)).blobs] == ["restyle"]
    # The same change away from the action point is content: it was not the pointer's doing.
    assert [bl.kind for bl in diff_frames(a, b, point=(500, 300)).blobs] == ["content"]
    assert [bl.kind for bl in diff_frames(a, b).blobs] == ["content"]


def test_new_shapes_under_the_pointer_are_content():
    a = _button(blank(), (255, 255, 255), (255, 255, 255))  # an empty box ...
    b = _button(blank(), (13, 110, 253), (255, 255, 255))  # ... filled, with a mark drawn inside
    b[118:122, 236:284] = (13, 110, 253)
    b[110:130, 236:240] = (255, 255, 255)
    assert [bl.kind for bl in diff_frames(a, b, point=(260, 120)).blobs] == ["content"]


def test_small_deltas_are_render_noise_but_a_faint_line_is_not():
    a = blank(v=33)
    b = a.copy()
    b[200:204, 100:160] = 41  # 8 levels: anti-aliasing jitter, an unfinished transition
    assert [bl.kind for bl in diff_frames(a, b).blobs] == ["noise"]
    b[300:310, 100:300] = 58  # a low-contrast line on a dark theme (25 levels)
    assert sorted(bl.kind for bl in diff_frames(a, b).blobs) == ["content", "noise"]


@pytest.mark.parametrize("width", [1280, 1283, 17, 1])
@pytest.mark.parametrize("contiguous", [True, False])
def test_changed_pixels_match_a_per_pixel_comparison(width, contiguous):
    """The word-wise window search finds every changed pixel, whatever the row length (not a multiple of
    8 bytes) and whether the frames are views into RGBA buffers."""
    rng = np.random.default_rng(width)
    base = rng.integers(0, 256, (64, width, 4), dtype=np.uint8)
    a = base[..., :3] if not contiguous else np.ascontiguousarray(base[..., :3])
    for _ in range(20):
        b = a.copy()
        n = int(rng.integers(0, 6))
        ys, xs, cs = rng.integers(0, 64, n), rng.integers(0, width, n), rng.integers(0, 3, n)
        b[ys, xs, cs] ^= np.uint8(1 + int(rng.integers(0, 255)))
        if not contiguous:
            b4 = base.copy()
            b4[..., :3] = b
            b = b4[..., :3]
        want = (a != b).any(axis=2)
        got = diff_frames(a, b)
        assert got.changed_px == int(want.sum())
        if want.any():
            r, c = np.flatnonzero(want.any(axis=1)), np.flatnonzero(want.any(axis=0))
            assert got.bbox == (c[0], r[0], c[-1] + 1, r[-1] + 1)
            assert sum(bl.px for bl in got.blobs) == int(want.sum())
        else:
            assert got.bbox is None and not got.cells.any()


@pytest.mark.slow
def test_rgba_and_rgb_arrays_give_the_same_change_map():
    """Frames decoded as RGBA (the fast path) and as plain RGB are compared alike, on recorded frames:
    same changed pixels, box, cells and blob kinds, with and without a tolerance."""
    from conftest import sample_run_dirs
    from trajcheck.media.frames import decode

    pairs = 0
    for run in sample_run_dirs():
        frames = [decode(p) for p in sorted((run / "frames").glob("*.png"))[:4]]
        for f, g in zip(frames, frames[1:]):
            if f.px.shape != g.px.shape or f.px.shape[2] != 4:
                continue
            h, w = f.height, f.width
            for tol in (0, 8):
                fast = diff_frames(f.px, g.px, tol, (0, 0, 200, 200), (w / 2, h / 2))
                slow = diff_frames(np.ascontiguousarray(f.rgb), np.ascontiguousarray(g.rgb), tol, (0, 0, 200, 200),
                                   (w / 2, h / 2))
                assert (fast.changed_px, fast.bbox, fast.region_px) == (slow.changed_px, slow.bbox, slow.region_px)
                assert [(b.box, b.px, b.kind) for b in fast.blobs] == [(b.box, b.px, b.kind) for b in slow.blobs]
                assert np.array_equal(fast.cells, slow.cells)
                pairs += fast.changed
    assert pairs >= 10  # enough of the recorded pairs actually differ


def test_square_dilation_matches_scipy():
    from scipy import ndimage

    from trajcheck.analyzers.pixeldiff import grow

    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 7), (40, 33), (5, 200)]:
        for density in (0.01, 0.2):
            e = rng.random(shape) < density
            want = ndimage.binary_dilation(e, structure=np.ones((5, 5), dtype=bool))
            assert np.array_equal(grow(e, 2), want), (shape, density)


def test_a_known_band_of_changed_rows_gives_the_same_change_map():
    """The decoder hands the pair's changed rows to the diff (it compared the frames already): the change
    map is the one the diff finds on its own."""
    from trajcheck.analyzers.pixeldiff import changed_rows

    rng = np.random.default_rng(3)
    for trial in range(40):
        a = rng.integers(0, 256, (96, 130, 4), dtype=np.uint8)
        b = a.copy()
        for _ in range(trial % 4):  # 0 to 3 changed patches, anywhere (the edges included)
            y, x = int(rng.integers(0, 90)), int(rng.integers(0, 120))
            b[y:y + int(rng.integers(1, 7)), x:x + int(rng.integers(1, 11)), :3] ^= np.uint8(rng.integers(1, 256))
        band = changed_rows(a, b)
        assert (band == (0, 0)) == np.array_equal(a, b)
        plain, banded = diff_frames(a, b, point=(64.0, 48.0)), diff_frames(a, b, point=(64.0, 48.0), band=band)
        assert (plain.changed_px, plain.bbox, plain.blobs) == (banded.changed_px, banded.bbox, banded.blobs)
        assert np.array_equal(plain.cells, banded.cells)
