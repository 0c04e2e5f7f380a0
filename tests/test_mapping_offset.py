"""`[step] screenshots_offset` with each way a mapping names screenshots (a field, a template, a glob): each step's
screenshot is the one the step `offset` later gives, and past either end the file numbered one on from its
neighbour, when it exists (issue 47: a log whose steps name the screen one step off)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.base.errors import UsageError
from trajcheck.readers.mapping.read import read_mapped
from trajcheck.readers.mapping.schema import Mapping

HEAD = """[run]
files = "log.json"
steps = "steps"
[step]
type = "a"
"""


def run(tmp: Path, named: list[int | None]) -> Path:
    """A run of len(named) clicks and screens s0.png ... s<n>.png; step i's log names s<named[i]>.png."""
    d = tmp / "run"
    d.mkdir()
    for k in range(len(named) + 1):
        Image.new("RGB", (8, 8), (k * 20, 0, 0)).save(d / f"s{k}.png")
    d.joinpath("log.json").write_text(json.dumps({"steps": [
        {"a": "click", **({"shot": f"s{j}.png"} if j is not None else {})} for j in named]}))
    return d


def frames(tmp: Path, d: Path, lines: str) -> list[tuple[str | None, str | None]]:
    m = tmp / "m.toml"
    m.write_text(HEAD + lines)
    return [(s.frame_pre, s.frame_post) for s in read_mapped(Mapping(m), d, "run")[0].steps]


TRUTH = [("s0.png", "s1.png"), ("s1.png", "s2.png"), ("s2.png", "s3.png")]


def test_a_field_named_one_step_early_is_read_with_offset_1(tmp_path):
    d = run(tmp_path, [None, 0, 1])  # each step names the screen before the one it acted on
    assert frames(tmp_path, d, 'screenshot = "shot"\nscreenshot_is = "pre"\n') != TRUTH
    # the last step's screen before is the one its neighbour's number leads to (s2 after s1), its after s3
    assert frames(tmp_path, d, 'screenshot = "shot"\nscreenshot_is = "pre"\nscreenshots_offset = 1\n') == TRUTH


def test_a_field_named_one_step_late_is_read_with_offset_minus_1(tmp_path):
    d = run(tmp_path, [2, 3, None])  # each step names the screen after the one after it
    got = frames(tmp_path, d, 'screenshot = "shot"\nscreenshot_is = "post"\nscreenshots_offset = -1\n')
    assert got[1:] == TRUTH[1:] and got[0] == (None, "s1.png")  # s1 from s2's number; nothing before it


def test_a_template_and_a_glob_take_the_offset_too(tmp_path):
    d = run(tmp_path, [None, None, None])
    assert frames(tmp_path, d, 'screenshot_file = "s{index1}.png"\nscreenshots_offset = -1\n') == TRUTH
    assert frames(tmp_path, d, 'screenshot_file = "s{index}.png"\nscreenshots_offset = 1\n') == \
        [("s1.png", "s2.png"), ("s2.png", "s3.png"), ("s3.png", None)]
    assert frames(tmp_path, d, 'screenshots = "s*.png"\nscreenshots_offset = 1\n') == \
        [("s1.png", "s2.png"), ("s2.png", "s3.png"), ("s3.png", None)]


@pytest.mark.parametrize("bad", ['"1"', "1.5", "true"])
def test_an_offset_that_is_not_a_whole_number_is_a_usage_error(tmp_path, bad):
    m = tmp_path / "m.toml"
    m.write_text(HEAD + f"screenshots_offset = {bad}\n")
    with pytest.raises(UsageError, match="screenshots_offset"):
        Mapping(m)
