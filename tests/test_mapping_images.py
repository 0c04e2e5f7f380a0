"""`[run] images` and `[step] screenshot_after`: a log whose steps name their screens before and after by id into a
map of images elsewhere in the log (Midscene's `{dump, images}`; issue 47 item 4, an image reference inside the
log as the step's screenshot)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.base.errors import UsageError
from trajcheck.readers.mapping.read import read_mapped
from trajcheck.readers.mapping.schema import Mapping

MAPPING = """[run]
files = "log.json"
steps = "run.steps"
images = "images"
[step]
type = "a"
screenshot = "before.id"
screenshot_after = "after.id"
"""


def _data_url(k: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (k * 30, 0, 0)).save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _run(tmp: Path, steps: list[dict[str, object]], images: dict[str, str]) -> Path:
    d = tmp / "run"
    d.mkdir()
    d.joinpath("log.json").write_text(json.dumps({"run": {"steps": steps}, "images": images}))
    return d


def _read(tmp: Path, d: Path, text: str = MAPPING):
    m = tmp / "m.toml"
    m.write_text(text)
    return read_mapped(Mapping(m), d, "run")


def test_ids_into_the_images_map_are_the_steps_frames(tmp_path):
    images = {f"id{k}": _data_url(k) for k in range(5)}  # id4 is named by no step
    steps = [{"a": "click", "before": {"id": "id0"}, "after": {"id": "id1"}},
             {"a": "click", "before": {"id": "id1"}, "after": {"id": "id2"}},
             {"a": "click", "before": {"id": "id2"}, "after": {"id": "id3"}}]
    run, problems = _read(tmp_path, _run(tmp_path, steps, images))
    pre = [s.frame_pre for s in run.steps]
    post = [s.frame_post for s in run.steps]
    assert None not in pre and None not in post
    # an image named by two steps is one frame, decoded once; the image no step names is not decoded
    assert post[0] == pre[1] and post[1] == pre[2] and len(run.inline_frames) == 4
    assert run.extra["images_named"] == 4
    assert Image.open(io.BytesIO(run.inline_frames[post[2]])).getpixel((0, 0))[0] == 90  # id3's red
    assert not problems


def test_a_value_that_is_no_id_is_read_as_without_the_map_and_a_bad_image_is_a_warning(tmp_path):
    images = {"id0": _data_url(0), "bad": "data:image/png;base64,AAAA"}
    d = _run(tmp_path, [{"a": "click", "before": {"id": "id0"}, "after": {"id": "bad"}},
                        {"a": "click", "before": {"id": "s.png"}}], images)
    Image.new("RGB", (8, 8)).save(d / "s.png")
    run, problems = _read(tmp_path, d)
    assert run.steps[1].frame_pre == "s.png"  # a path, as without the map
    # the first step's after is unreadable: warned, and its after is the next step's before, as without the field
    assert run.steps[0].frame_post == "s.png"
    assert any(p.slug.value == "frame_unreadable" for p in problems), problems


def test_screenshot_after_with_post_or_an_offset_is_refused(tmp_path):
    d = _run(tmp_path, [{"a": "click"}], {})
    for extra in ("screenshot_is = 'post'\n", "screenshots_offset = 1\n"):
        with pytest.raises(UsageError, match="screenshot_after"):
            _read(tmp_path, d, MAPPING + extra)
